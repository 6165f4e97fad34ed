import Foundation
import HomeProto
import Logging
import Synchronization
import Testing
import Wire

@testable import HomeClient

/// What a service learns of the SDK's work without reading its code: the log of its reconnects, a
/// marker where a change stream resumed, a record of each call.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ClientObservabilityTests {
    @Test func aChangeStreamMarksAndLogsWhereItReconnected() async throws {
        let server = try await HomedProcess.launch()
        let log = LogCapture()
        let client = HomeClient(
            endpoint: server.endpoint,
            token: server.ownerToken,
            timeout: .seconds(20),
            logger: log.logger
        )
        let home = try await client.addHome(named: "Followed")
        var changes = client.changes(ChangeOptions(homes: [home.id.uuid], snapshot: true)).includingReconnects()
            .makeAsyncIterator()
        guard case .event(let snapshot)? = try await changes.next() else {
            Issue.record("the stream did not begin with its snapshot")
            return
        }
        try await server.restart()
        let other = server.client()
        _ = try await other.home(home.id.uuid).addRoom(named: "After Restart")
        // The marker comes first, naming where the stream resumed; then the change it missed.
        guard case .reconnected(let resumingAfter)? = try await changes.next() else {
            Issue.record("no reconnect marker before the next event")
            return
        }
        #expect(resumingAfter == [home.id.uuid: snapshot.revision])
        guard case .event(let event)? = try await changes.next() else {
            Issue.record("the stream did not resume")
            return
        }
        #expect(kindName(event) == "roomAdded")
        let messages = log.messages
        #expect(messages.contains { $0.level == .info && $0.message == "change stream reconnected" }, "\(messages)")
        #expect(messages.contains { $0.level == .info && $0.message == "disconnected" }, "\(messages)")
        await client.close()
        await other.close()
    }

    @Test func theObserverSeesEveryCallWithItsOutcome() async throws {
        let server = try await HomedProcess.launch()
        let observer = RecordingObserver()
        let client = HomeClient(endpoint: server.endpoint, token: server.ownerToken, observer: observer)
        _ = try await client.listHomes()
        await #expect(throws: HomeClientError.self) {
            _ = try await client.home(UUID()).addRoom(named: "Nowhere")
        }
        let seen = observer.records
        #expect(seen.map(\.method) == ["home.v1.HomeService/ListHomes", "home.v1.HomeService/AddRoom"])
        #expect(seen.map(\.status) == [.ok, .notFound])
        #expect(seen.map(\.attempts) == [1, 1])
        #expect(seen[0].idempotencyKey == nil && seen[1].idempotencyKey != nil)
        #expect(seen[1].error?.homeKitCode == 2)
        await client.close()
    }

    @Test func aSimulatedAccessoryWithItsOwnConnectionLinksAgainAfterARestart() async throws {
        let server = try await HomedProcess.launch()
        let owner = server.client()
        let home = owner.home(try await owner.addHome(named: "Home").id.uuid)
        let lamp = SimulatedAccessory(
            Advertised.bulb("Lamp"),
            setupCode: Simulators.setupCode,
            endpoint: server.endpoint
        )
        try await lamp.start()
        let added = try await home.addAccessory(await lamp.id, setupCode: Simulators.setupCode)[0]
        _ = await lamp.paired()
        var changes = try await opened(owner, ChangeOptions(homes: [home.id], kinds: [.reachabilityUpdated]))
        try await server.restart()
        // After the restart the accessory is unreachable until it attaches again, by itself.
        var event = try await changes.next()
        while let current = event, !(current.reachabilityUpdated.reachable) { event = try await changes.next() }
        #expect(event?.reachabilityUpdated.accessoryID.uuid == added.id.uuid)
        // (Its relinkCount may still be 0 here: the server says reachable on the attach, before the
        // accessory's actor has taken the answer.)
        let brightness = added.characteristic(Advertised.brightness).id.uuid
        try await home.writeCharacteristic(brightness, .int(42))
        #expect(await lamp.values[brightness] == .int(42))
        await lamp.stop()
        await owner.close()
    }
}

/// A `LogHandler` that keeps what it is given, for a test to read.
final class LogCapture: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
    }

    private let entries = Mutex<[Entry]>([])
    var messages: [Entry] { entries.withLock { $0 } }

    var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel = Logger.Level.trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            capture.entries.withLock { $0.append(Entry(level: event.level, message: "\(event.message)")) }
        }
    }
}

/// Keeps every call record.
final class RecordingObserver: CallObserver {
    private let kept = Mutex<[CallRecord]>([])
    var records: [CallRecord] { kept.withLock { $0 } }

    func callFinished(_ call: CallRecord) {
        kept.withLock { $0.append(call) }
    }
}
