import Foundation
import Logging
import RPCClient
import RPCServer
import TestSupport
import Testing
import UV
import Wire

/// A server on 127.0.0.1:0 with test methods, plus helpers to drive clients on the same loop.
final class TestServer {
    static let echo = "test.v1.Test/Echo"
    /// Answers with the request reversed, written into the outgoing bytes in place.
    static let reverse = "test.v1.Test/Reverse"
    static let hang = "test.v1.Test/Hang"
    static let delayed = "test.v1.Test/Delayed"
    static let count = "test.v1.Test/Count"
    static let bulk = "test.v1.Test/Bulk"
    /// Answers with as many bytes as its request's big-endian UInt32 says.
    static let large = "test.v1.Test/Large"
    /// A bidirectional method: our protocol refuses it (gRPC door only).
    static let chat = "test.v1.Test/Chat"

    let loop: EventLoop
    let server: RPCServer
    let endpoint: Endpoint
    /// Streams of calls to `hang` that were cancelled, in order.
    var cancelledHangs: [StreamID] = []
    var hangsStarted = 0
    /// 64 KiB messages the `bulk` stream has sent so far.
    var bulkSent = 0
    var timers: [LoopTimer] = []
    /// Runs for each call to `hang`, after it is counted.
    var onHang: (ServerCall) -> Void = { _ in }

    init(
        configure: (inout ServerConfiguration) -> Void = { _ in },
        authenticator: (any Authenticator)? = nil,
        logger: Logger? = nil
    ) throws {
        loop = try EventLoop()
        var configuration = ServerConfiguration()
        configuration.timerResolutionMilliseconds = 10
        configure(&configuration)
        var registry = MethodRegistry()
        var hangHook: (ServerCall) -> Void = { _ in }
        var delayHook: (ServerCall, [UInt8]) -> Void = { _, _ in }
        registry.register(Self.echo, kind: .unary) { call, request in call.respond(Array(request)) }
        registry.register(Self.reverse, kind: .unary) { call, request in
            call.respond(length: request.count) { output in for byte in request.reversed() { output.append(byte) } }
        }
        registry.register(Self.large, kind: .unary) { call, request in
            let size = Int(UInt32(bigEndian: request.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }))
            call.respond([UInt8](repeating: 0x4C, count: size))
        }
        registry.register(Self.hang, kind: .unary) { call, _ in hangHook(call) }
        registry.register(Self.chat, kind: .bidirectionalStreaming) { call, request in call.send(Array(request)) }
        registry.register(Self.delayed, kind: .unary) { call, request in delayHook(call, Array(request)) }
        var bulkHook: (ServerCall, Int) -> Void = { _, _ in }
        registry.register(Self.bulk, kind: .serverStreaming) { call, request in
            bulkHook(call, Int(UInt32(bigEndian: request.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })))
        }
        registry.register(Self.count, kind: .serverStreaming) { call, request in
            CountingStream(
                call: call,
                total: Int(UInt32(bigEndian: request.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }))
            ).pump()
        }
        var quiet = Logger(label: "homerpc.test-server")
        quiet.logLevel = .warning
        server = RPCServer(
            loop: loop,
            configuration: configuration,
            registry: registry,
            authenticator: authenticator,
            logger: logger ?? quiet
        )
        endpoint = try server.listen(on: .tcp(host: "127.0.0.1", port: 0))
        hangHook = { [unowned self] call in
            self.hangsStarted += 1
            call.onCancel = { [unowned self] in self.cancelledHangs.append(call.streamID) }
            self.onHang(call)
        }
        bulkHook = { [unowned self] call, total in
            let chunk = [UInt8](repeating: 0xB1, count: 64 * 1024)
            func pump() {
                while self.bulkSent < total {
                    guard call.send(chunk) else { return }
                    self.bulkSent += 1
                }
                call.finish()
            }
            call.onWritable = pump
            pump()
        }
        delayHook = { [unowned self] call, request in
            let timer = LoopTimer(loop: self.loop)
            self.timers.append(timer)
            timer.start(after: .milliseconds(50)) { call.respond(request) }
        }
    }

    /// Connects a client and returns it once its handshake is done (runs the loop until then).
    func connectClient(
        configuration: ClientConnection.Configuration = ClientConnection.Configuration()
    ) throws -> ClientConnection {
        var outcome: Result<ClientConnection, RPCError>?
        try ClientConnection.connect(to: endpoint, on: loop, configuration: configuration) { result in
            outcome = result
            self.loop.stop()
        }
        loop.runForTest(timeout: .seconds(10))
        return try #require(try outcome?.get())
    }

    /// Shuts the server down and checks that the loop closes cleanly.
    func shutDown() throws {
        for timer in timers { timer.close() }
        var stopped = false
        server.beginGracefulShutdown { stopped = true }
        if !stopped {
            let watchdog = LoopTimer(loop: loop)
            watchdog.start(after: .milliseconds(1), repeating: .milliseconds(5)) {
                if stopped { self.loop.stop() }
            }
            loop.runForTest(timeout: .seconds(15))
            watchdog.close()
        }
        try loop.close()
    }
}

/// Sends `total` messages, each its 4-byte big-endian index, as fast as credit and the buffer allow.
final class CountingStream {
    let call: ServerCall
    let total: Int
    var next = 0

    init(call: ServerCall, total: Int) {
        self.call = call
        self.total = total
    }

    func pump() {
        call.onWritable = { [self] in pump() }
        while next < total {
            let value = UInt32(next).bigEndian
            guard call.send(withUnsafeBytes(of: value) { Array($0) }) else { return }
            next += 1
        }
        call.onWritable = nil
        call.finish()
    }
}

func bigEndianBytes(_ value: UInt32) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}
