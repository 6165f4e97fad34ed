import Foundation
import HomeClient
import HomeProto
import Testing

/// What a service sees of a client's life: its thread goes when it goes, and closing it ends its
/// change streams.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ClientLifecycleTests {
    /// Threads of this process named as the client's loop thread names itself.
    static func clientThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
            return name?.hasPrefix("homerpc-client") == true
        }.count
    }

    @Test func clientsDroppedWithoutClosingLeaveNoThread() async throws {
        let server = try await HomedProcess.launch()
        let before = Self.clientThreads()
        do {
            var clients: [HomeClient] = []
            for _ in 0..<20 {
                let client = server.client()
                _ = try await client.listHomes()
                clients.append(client)
            }
            #expect(Self.clientThreads() >= before + 20)
        }
        // Dropped: each stops its loop thread without being waited for.
        var remaining = Self.clientThreads()
        for _ in 0..<100 where remaining > before {
            try await Task.sleep(for: .milliseconds(50))
            remaining = Self.clientThreads()
        }
        #expect(remaining <= before)
    }

    @Test func closeEndsALiveChangeStream() async throws {
        let server = try await HomedProcess.launch()
        let client = server.client()
        let home = try await client.addHome(named: "Closing")
        var stream = client.changes(ChangeOptions(homes: [home.id.uuid], snapshot: true)).makeAsyncIterator()
        #expect(try await stream.next().map(kindName) == "snapshot")
        let ended = Task { [stream] in
            var stream = stream
            return try await stream.next()
        }
        try await Task.sleep(for: .milliseconds(200))
        await client.close()
        // The stream ends (nil) rather than reconnecting and delivering the owner's next change.
        #expect(try await ended.value == nil)
        let other = server.client()
        _ = try await other.home(home.id.uuid).addRoom(named: "After Close")
        await other.close()
    }
}

/// Ids in the SDK's model: 16 bytes, or a loud stop, never a made-up id.
@Suite struct ModelIDTests {
    @Test func anIDIsItsSixteenBytes() {
        let id = UUID()
        #expect(id.data.count == 16)
        #expect(id.data.uuid == id)
        #expect(UUID(data: Data([1, 2, 3])) == nil)
    }

    @Test func anIDOfAnotherLengthStopsTheProgram() async {
        await #expect(processExitsWith: .failure) { _ = Data([1, 2, 3]).uuid }
    }
}
