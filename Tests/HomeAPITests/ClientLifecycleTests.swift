import Foundation
import HomeProto
import HomeService
import SwiftProtobuf
import Testing
import Wire

@testable import HomeClient
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
        let (opened, signal) = AsyncStream.makeStream(of: Void.self)
        let following = Task {
            var stream = client.changes(ChangeOptions(homes: [home.id.uuid], snapshot: true)).makeAsyncIterator()
            _ = try await stream.next()  // the snapshot: the stream is open
            signal.finish()
            _ = try await stream.next()  // nothing more comes: cancelled while waiting
        }
        for await _ in opened {}
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
        // Whether the close comes while next() waits or just before, the stream is open (its
        // snapshot came): either way it must end rather than reconnect.
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

    @Test func aModelObjectsUniqueIdentifierIsItsID() {
        let id = UUID()
        let room = Room.with { $0.id = id.data }
        let objects: [any ModelObject] = [room, Home.with { $0.id = id.data }, Account.with { $0.id = id.data }]
        #expect(objects.map(\.uniqueIdentifier) == [id, id, id])
    }

    @Test func aModelObjectWithoutAnIDStopsTheProgram() async {
        await #expect(processExitsWith: .failure) { _ = Room().uniqueIdentifier }
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

/// Per-call options and the retry policy.
@Suite(.serialized, .timeLimit(.minutes(2))) struct CallOptionsTests {
    @Test func aServicesOwnKeyAppliesItsMutationOnce() async throws {
        let server = try await HomedProcess.launch()
        let client = server.client()
        let home = try await client.addHome(named: "Keyed")
        let options = CallOptions(idempotencyKey: "service-request-41")
        // The service's own retry of one request: the same key, so the same outcome, one room.
        let first = try await HomeClient.$callOptions.withValue(options) {
            try await client.home(home.id.uuid).addRoom(named: "Study")
        }
        let again = try await HomeClient.$callOptions.withValue(options) {
            try await client.home(home.id.uuid).addRoom(named: "Study")
        }
        #expect(first.id == again.id)
        #expect(try await client.home(home.id.uuid).get().rooms.filter { $0.name == "Study" }.count == 1)
        await client.close()
    }

    @Test func aCallsDeadlineCoversConnecting() async throws {
        // A listener that accepts connections and never answers the handshake.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mute-\(UUID()).sock").path
        let mute = Process()
        mute.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        mute.arguments = [
            "python3", "-c",
            "import socket, sys\ns = socket.socket(socket.AF_UNIX)\ns.bind(sys.argv[1])\ns.listen(16)\nprint('ready', flush=True)\nsys.stdin.read()",
            path,
        ]
        let ready = Pipe()
        mute.standardOutput = ready
        // It listens until its standard input closes: when the test ends (no timer of its own).
        let lifetime = Pipe()
        mute.standardInput = lifetime
        try mute.run()
        defer {
            mute.terminate()
            try? lifetime.fileHandleForWriting.close()
        }
        _ = ready.fileHandleForReading.availableData  // "ready"
        let client = HomeClient(endpoint: .unix(path: path), token: "hrt_x", retryPolicy: .never)
        let started = ContinuousClock.now
        do {
            _ = try await HomeClient.$callOptions.withValue(CallOptions(timeout: .milliseconds(300))) {
                try await client.listHomes()
            }
            Issue.record("a mute server answered")
        } catch {
            #expect((error as? HomeClientError)?.wasSent == false)
        }
        // Within the call's deadline (and some slack), not the connection's 10 s handshake timeout.
        #expect(ContinuousClock.now - started < .seconds(5))
        await client.close()
    }

    @Test func backoffGrowsToItsCapWithJitter() {
        let policy = RetryPolicy(maxAttempts: 6, initialBackoff: .milliseconds(100), maxBackoff: .seconds(1))
        for retry in 1...5 {
            let whole = min(Duration.seconds(1), .milliseconds(100) * (1 << (retry - 1)))
            for _ in 0..<20 {
                let wait = policy.backoff(beforeRetry: retry)
                #expect(wait >= whole / 2 && wait <= whole)
            }
        }
        var steady = policy
        steady.jitter = false
        #expect(steady.backoff(beforeRetry: 3) == .milliseconds(400))
    }
}

/// The SDK's type constants are the catalog's types (both generated from docs/HAP-CATALOG.md).
@Suite struct StandardTypeConstantTests {
    @Test func constantsNameTheCatalogsTypes() {
        let services = Set(StandardCatalog.serviceTypes.map(\.uuid))
        let characteristics = Set(StandardCatalog.characteristicTypes.map(\.uuid))
        for id in [
            ServiceTypes.lightbulb, ServiceTypes.switch, ServiceTypes.accessoryInformation, ServiceTypes.heaterCooler,
        ] {
            #expect(services.contains(id), "\(id)")
        }
        for id in [CharacteristicTypes.on, CharacteristicTypes.brightness, CharacteristicTypes.pm25Density] {
            #expect(characteristics.contains(id), "\(id)")
        }
        #expect(ServiceTypes.lightbulb == "00000043-0000-1000-8000-0026BB765291")
        #expect(ServiceTypes.all == StandardCatalog.serviceTypes.map(\.uuid))
        #expect(CharacteristicTypes.all == StandardCatalog.characteristicTypes.map(\.uuid))
    }
}

/// The connection's states, as a service would show or log them.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ConnectionStateTests {
    @Test func aRestartShowsAsDisconnectedThenConnected() async throws {
        let server = try await HomedProcess.launch()
        let client = server.client()
        var states = await client.connectionStates().makeAsyncIterator()
        #expect(await states.next() == .idle)
        let home = try await client.addHome(named: "Watched")
        #expect(await states.next() == .connecting)
        #expect(await states.next() == .connected)
        // A change stream meets the restart and reconnects by itself; the states tell of it.
        var changes = client.changes(ChangeOptions(homes: [home.id.uuid], snapshot: true)).makeAsyncIterator()
        _ = try await changes.next()
        try await server.restart()
        let other = server.client()
        _ = try await other.home(home.id.uuid).addRoom(named: "After Restart")
        var event = try await changes.next()
        while let current = event, kindName(current) != "roomAdded" { event = try await changes.next() }
        var seen: [ConnectionState] = []
        while let state = await states.next() {
            seen.append(state)
            if state == .connected { break }
        }
        #expect(seen.first.map { if case .disconnected = $0 { true } else { false } } == true, "\(seen)")
        #expect(seen.last == .connected)
        await client.close()
        #expect(await states.next() == .idle)
        await other.close()
    }
}
