import Logging
import RPCClient
import Synchronization
import TestSupport
import Testing
import UV
import Wire

@testable import RPCServer

/// The server's log of calls: every call at debug with the client's `trace-id` (PROTOCOL.md,
/// "CALL_START"), server faults whatever the level.
@Suite struct CallLogTests {
    @Test func atDebugEveryCallIsLoggedWithItsTraceID() throws {
        let records = LogRecords()
        let test = try TestServer(logger: records.logger(level: .debug))
        let client = try test.connectClient()
        call(client, test, TestServer.echo, traceID: "trace-42")
        call(client, test, "test.Nothing/Here", traceID: nil)
        let ended = records.all.first { $0.message == "call ended" }
        #expect(ended?.metadata["method"] == "\(TestServer.echo)")
        #expect(ended?.metadata["trace-id"] == "trace-42")
        #expect(ended?.metadata["status"] == "\(StatusCode.ok)")
        #expect(ended?.level == .debug)
        let refused = records.all.first { $0.message == "call refused" }
        #expect(refused?.metadata["status"] == "\(StatusCode.unimplemented)")
        client.close()
        try test.shutDown()
    }

    @Test func atInfoOnlyServerFaultsAreLogged() throws {
        let records = LogRecords()
        let test = try TestServer(logger: records.logger(level: .info))
        test.onHang = { call in call.fail(CallStatus(code: .internal, message: "a bug")) }
        let client = try test.connectClient()
        call(client, test, TestServer.echo, traceID: "quiet")
        call(client, test, TestServer.hang, traceID: "loud")
        let calls = records.all.filter { $0.message == "call ended" }
        #expect(calls.count == 1)
        #expect(calls.first?.metadata["trace-id"] == "loud")
        #expect(calls.first?.metadata["message"] == "a bug")
        #expect(calls.first?.level == .warning)
        client.close()
        try test.shutDown()
    }

    private func call(_ client: ClientConnection, _ test: TestServer, _ method: String, traceID: String?) {
        var answered = false
        let metadata = traceID.map { [MetadataEntry(key: "trace-id", value: Array($0.utf8))] } ?? []
        client.unary(method, request: [1, 2, 3], timeoutMilliseconds: 5_000, metadata: metadata) { _ in
            answered = true
        }
        test.loop.run(until: { answered })
    }
}

/// Log records kept for a test to read.
final class LogRecords: Sendable {
    struct Record: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }

    private let records = Mutex<[Record]>([])

    var all: [Record] { records.withLock { $0 } }

    func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "test") { _ in Handler(records: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ record: Record) { records.withLock { $0.append(record) } }

    private struct Handler: LogHandler {
        let records: LogRecords
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let metadata = (event.metadata ?? [:]).mapValues { "\($0)" }
            records.append(Record(level: event.level, message: "\(event.message)", metadata: metadata))
        }
    }
}
