import Foundation
import HomeClient
import HomeProto
import Testing
import Wire

@testable import RPCClient

/// What a service sees of a client's life: its thread goes when it goes, and closing it ends its
/// change streams.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ClientLifecycleTests {
    @Test func aClientDroppedWithoutClosingStopsItsThread() async throws {
        let server = try await HomedProcess.launch()
        var client: RPCClient? = try await RPCClient.connect(to: server.endpoint)
        _ = try await client?.unary("home.v1.Health/Check", request: [])
        // Signalled when the client's loop thread has closed its loop (as close() waits for).
        let stopped = try #require(client?.stopped)
        client = nil
        #expect(stopped.wait(timeout: .now() + 5) == .success)
    }

    @Test func aCancelledChangeStreamThrowsCancellationError() async throws {
        let server = try await HomedProcess.launch()
        let client = server.client()
        let home = try await client.addHome(named: "Cancelled")
        let following = Task {
            var stream = client.changes(ChangeOptions(homes: [home.id.uuid], snapshot: true)).makeAsyncIterator()
            _ = try await stream.next()  // the snapshot: the stream is open
            _ = try await stream.next()  // nothing more comes: cancelled while waiting
        }
        try await Task.sleep(for: .milliseconds(300))
        following.cancel()
        await #expect(throws: CancellationError.self) { try await following.value }
        await client.close()
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

/// A failure that provably sent nothing says so, and may be retried as it is.
@Suite struct UnsentCallTests {
    @Test func aCallThatCouldNotConnectWasNotSentAndIsRetryable() async throws {
        // A socket path nothing listens on.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("no-homed-\(UUID()).sock").path
        let client = HomeClient(endpoint: .unix(path: path), token: "hrt_x")
        do {
            _ = try await client.listHomes()
            Issue.record("a call to a closed port answered")
        } catch {
            #expect(error.status == .unavailable)
            #expect(!error.wasSent)
            #expect(error.isRetryable)
        }
        await client.close()
    }
}
