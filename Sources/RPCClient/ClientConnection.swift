public import TLS
public import UV
public import Wire

/// The client side of one HomeRPC connection, on the loop thread, with callbacks: the allocation-lean
/// layer the load generator drives directly and `RPCClient` wraps in async/await.
///
/// Calls may be pipelined freely: each gets the next stream id. Frames are written when the event
/// that produced them ends: calls started while handling a read (a completion starting the next
/// call) or inside ``batch(_:)`` leave in one write; a call started elsewhere is written at once.
public final class ClientConnection: ConnectionDelegate {
    /// Settings this client announces.
    public struct Configuration: Sendable {
        /// Largest frame payload this client accepts. One answer is one frame and a whole home is one
        /// answer (about 900 bytes a lamp): at the protocol's 1 MiB default a home of 1,200 lamps
        /// could not be read. The protocol's largest, 16 MiB, takes about 18,000, past a server's
        /// default limit of 10,000 accessories a home. The buffer grows only when such a frame comes.
        public var maxFrameSize = WireLimits.maximumMaxFrameSize
        /// Messages the server may send on a stream before the client grants more.
        public var initialStreamCredit: UInt32 = 64
        /// Cap on unsent bytes before writes fail.
        public var maxPendingWriteBytes = 64 << 20
        /// How long connecting may take, the server's preface and SETTINGS included: a listener that
        /// accepts and never answers (a hung server, another service on the port) fails the connect
        /// instead of holding it for ever.
        public var handshakeTimeout: Duration = .seconds(10)
        /// While calls are open, a connection that brought no byte for this long gets a PING; `nil`
        /// turns the client's keepalive off.
        public var keepaliveInterval: Duration? = .seconds(30)
        /// How long after that PING a byte must arrive, or the connection is dead (a server gone
        /// without closing it, a broken path) and its calls end UNAVAILABLE instead of waiting for
        /// ever. The server's own keepalive uses the same defaults.
        public var keepaliveTimeout: Duration = .seconds(10)
        /// TLS to the server (a client context: whom to trust, and a certificate for mutual TLS);
        /// `nil` speaks plain TCP, as on loopback and Unix sockets.
        public var tls: TLSContext?
        /// The name the server's certificate must carry; `nil` takes the endpoint's host.
        public var serverName: String?
        /// The first call's stream id. Tests start near the end of the id space to reach it.
        var firstStreamID: UInt32 = 1

        /// The defaults.
        public init() {}
    }

    /// What the client knows of a call in flight.
    private final class PendingCall {
        enum Kind {
            case unary((Result<[UInt8], RPCError>) -> Void)
            case stream(onMessage: ([UInt8]) -> Void, onEnd: (RPCError?) -> Void, automaticCredit: Bool)
        }

        let kind: Kind
        var response: [UInt8]?
        var consumedSinceGrant: UInt32 = 0

        init(kind: Kind) { self.kind = kind }
    }

    /// The loop the connection and its callbacks run on.
    public let loop: EventLoop
    /// The settings it was opened with.
    public let configuration: Configuration
    let connection: Connection
    private var decoder: FrameDecoder
    private var outbound: [UInt8] = []
    /// Nesting depth of ``batch(_:)``; output is written when it returns to zero.
    private var batchDepth = 0
    private var calls: [StreamID: PendingCall] = [:]
    /// The id of the next call; 0 once the last id (2^32 − 1) was used: ids never repeat on a
    /// connection, so further calls need a new one.
    private var nextStreamID: UInt32
    private var onReady: ((Result<ClientConnection, RPCError>) -> Void)?
    /// The server's settings, once its handshake arrived.
    public private(set) var serverSettings: Settings?
    /// The server's GOAWAY, if it sent one.
    public private(set) var goAway: GoAway?
    /// Runs once when the connection has closed, with the reason if it failed.
    public var onClose: ((RPCError?) -> Void)?
    private var closeError: RPCError?
    /// When a byte last arrived, and when the unanswered keepalive PING left (loop milliseconds).
    private var lastReceivedAt: UInt64 = 0
    private var pingSentAt: UInt64?
    private var keepaliveTimer: LoopTimer?
    /// The deadlines of the calls that have one.
    private lazy var deadlines = CallDeadlines(
        loop: loop,
        isOpen: { [unowned self] in calls[$0] != nil },
        expire: { [unowned self] in
            end($0, with: RPCError(code: .deadlineExceeded, message: "no answer before the deadline"), sendCancel: true)
            flushUnlessBatching()
        }
    )

    private init(connection: Connection, configuration: Configuration) {
        self.loop = connection.loop
        self.connection = connection
        self.configuration = configuration
        nextStreamID = max(1, configuration.firstStreamID)
        decoder = FrameDecoder(maxFrameSize: configuration.maxFrameSize, expectsPreface: true)
        connection.maxPendingWriteBytes = configuration.maxPendingWriteBytes
    }

    /// Connects, performs the handshake, and calls `completion` on the loop thread once the server's
    /// preface and SETTINGS have arrived.
    /// - Throws: `UVError` at once if the connect cannot start (e.g. a host that is not an IP literal).
    public static func connect(
        to endpoint: Endpoint,
        on loop: EventLoop,
        configuration: Configuration = Configuration(),
        completion: @escaping (Result<ClientConnection, RPCError>) -> Void
    ) throws(UVError) {
        // `completion` runs once: with the connection, the connect's failure, or the timeout's.
        let timer = LoopTimer(loop: loop)
        var finished = false
        var client: ClientConnection?
        let finish = { (result: Result<ClientConnection, RPCError>) in
            guard !finished else { return }
            finished = true
            timer.close()
            completion(result)
        }
        let timeout = configuration.handshakeTimeout
        timer.start(after: timeout) {
            let error = RPCError(
                code: .unavailable,
                message: "\(endpoint) did not answer the handshake within \(timeout.wholeMillisecondsRoundedUp) ms"
            )
            // A connection already open is closed, which reports the failure; a connect still under
            // way is dropped when it completes.
            if let client { client.fail(error) } else { finish(.failure(error)) }
        }
        do {
            try Connection.connect(to: endpoint, on: loop) { result in
                switch result {
                case .failure(let error):
                    finish(.failure(RPCError(code: .unavailable, message: "connect to \(endpoint) failed: \(error)")))
                case .success(let connection):
                    guard !finished else { return connection.close() }
                    let made = ClientConnection(connection: connection, configuration: configuration)
                    client = made
                    if let tls = configuration.tls {
                        let serverName: String? =
                            switch endpoint {
                            case .tcp(let host, _): configuration.serverName ?? host
                            case .unix: configuration.serverName
                            }
                        // Fails only for a socket closed already: start() then reports it.
                        try? connection.secure(with: tls.makeSession(serverName: serverName))
                    }
                    made.start(finish)
                }
            }
        } catch {
            timer.close()
            throw error
        }
    }

    private func start(_ completion: @escaping (Result<ClientConnection, RPCError>) -> Void) {
        onReady = completion
        connection.delegate = self
        FrameEncoder.encode(.preface(Preface()), into: &outbound)
        let settings = Settings([
            Setting(.maxFrameSize, UInt32(configuration.maxFrameSize)),
            Setting(.initialStreamCredit, configuration.initialStreamCredit),
        ])
        FrameEncoder.encode(.settings(settings), into: &outbound)
        do {
            try connection.startReading()
        } catch {
            fail(RPCError(code: .unavailable, message: "connection failed: \(error)"))
        }
        flush()
    }

    /// Runs `body` (which may start many calls) and writes everything it produced in one write.
    public func batch(_ body: () -> Void) {
        batchDepth += 1
        body()
        batchDepth -= 1
        if batchDepth == 0 { flush() }
    }

    /// Whether calls can still start on it: open, no GOAWAY from the server, stream ids left. A
    /// completion that starts the next call must check it: a call that cannot start fails before
    /// ``unary(_:request:timeoutMilliseconds:metadata:completion:)`` returns, so starting again from
    /// that failure recurses until the stack runs out.
    public var isOpen: Bool {
        connection.state == .open && closeError == nil && goAway == nil && nextStreamID != 0 && !isClosingWhenIdle
    }
    /// Set by ``closeWhenIdle()``.
    private var isClosingWhenIdle = false
    /// Calls started and not yet ended.
    public var callsInFlight: Int { calls.count }

    // MARK: Calls

    /// Starts a unary call; `completion` runs on the loop thread with the response or the error. A
    /// call that cannot start (``isOpen`` is false) fails at once, before this returns.
    /// - Parameter timeoutMilliseconds: the call's deadline, enforced by the server and here; 0 for none.
    @discardableResult
    public func unary(
        _ method: String,
        request: [UInt8],
        timeoutMilliseconds: UInt32 = 0,
        metadata: [MetadataEntry] = [],
        completion: @escaping (Result<[UInt8], RPCError>) -> Void
    ) -> StreamID {
        start(
            method,
            request: request,
            timeoutMilliseconds: timeoutMilliseconds,
            metadata: metadata,
            kind: .unary(completion)
        )
    }

    /// Starts a server-streaming call. With `automaticCredit` the client grants more messages as soon
    /// as `onMessage` has run; without it, the caller grants with ``grantCredit(_:on:)``. A call that
    /// cannot start (``isOpen`` is false) ends at once, before this returns.
    @discardableResult
    public func serverStream(
        _ method: String,
        request: [UInt8],
        timeoutMilliseconds: UInt32 = 0,
        metadata: [MetadataEntry] = [],
        automaticCredit: Bool = true,
        onMessage: @escaping ([UInt8]) -> Void,
        onEnd: @escaping (RPCError?) -> Void
    ) -> StreamID {
        let kind = PendingCall.Kind.stream(onMessage: onMessage, onEnd: onEnd, automaticCredit: automaticCredit)
        return start(method, request: request, timeoutMilliseconds: timeoutMilliseconds, metadata: metadata, kind: kind)
    }

    private func start(
        _ method: String,
        request: [UInt8],
        timeoutMilliseconds: UInt32,
        metadata: [MetadataEntry],
        kind: PendingCall.Kind
    ) -> StreamID {
        loop.assertOnLoopThread()
        let call = PendingCall(kind: kind)
        guard nextStreamID != 0 else {
            complete(call, error: .streamIDsExhausted)
            return .connection
        }
        let streamID = StreamID(nextStreamID)
        nextStreamID &+= 1
        if let closeError {
            complete(call, error: closeError)
            return streamID
        }
        if isClosingWhenIdle {
            // Never sent: safe to retry elsewhere.
            complete(call, error: RPCError(code: .unavailable, message: "the connection is closing", isRetryable: true))
            return streamID
        }
        // After a GOAWAY the server takes no new call: it would never answer this one.
        if let goAway {
            complete(
                call,
                error: RPCError(
                    code: .unavailable,
                    message: "server going away: \(goAway.message)",
                    isRetryable: true
                )
            )
            return streamID
        }
        calls[streamID] = call
        let start = CallStart(method: method, timeoutMilliseconds: timeoutMilliseconds, metadata: metadata)
        FrameEncoder.encodeCallStart(streamID: streamID, start, into: &outbound)
        FrameEncoder.encodeMessage(streamID: streamID, payload: request, endStream: true, into: &outbound)
        if nextStreamID == 0 {
            // That was the last id: the server takes no call after it and closes the connection
            // once its open calls have ended (PROTOCOL.md, "Connection lifecycle").
            FrameEncoder.encode(
                .goAway(GoAway(lastStreamID: .connection, code: .ok, message: "stream ids used up")),
                into: &outbound
            )
        }
        flushUnlessBatching()
        if timeoutMilliseconds > 0 {
            // The server enforces the deadline too; this covers a server that stopped answering.
            deadlines.add(streamID, at: loop.now + UInt64(timeoutMilliseconds) + 1000, openCalls: calls.count)
        }
        return streamID
    }

    /// Abandons a call: the server is told, and its completion runs with CANCELLED.
    public func cancel(_ streamID: StreamID) {
        end(streamID, with: RPCError(code: .cancelled, message: "cancelled by the client"), sendCancel: true)
        flushUnlessBatching()
    }

    /// Allows the server `increment` more messages on a stream started without automatic credit.
    public func grantCredit(_ increment: UInt32, on streamID: StreamID) {
        guard increment > 0, calls[streamID] != nil else { return }
        FrameEncoder.encode(.credit(streamID, increment: increment), into: &outbound)
        flushUnlessBatching()
    }

    /// Closes the connection; calls in flight fail with UNAVAILABLE.
    public func close() {
        fail(RPCError(code: .unavailable, message: "connection closed by the client"))
    }

    /// Takes no new call (``isOpen`` is false from now on) and closes the connection once the calls
    /// in flight have ended: a client moving to another connection lets the answers to what it
    /// sent arrive instead of failing calls the server may already have carried out.
    public func closeWhenIdle() {
        isClosingWhenIdle = true
        if calls.isEmpty { close() }
    }

    // MARK: ConnectionDelegate

    /// Decodes the frames read and hands each to its call.
    public func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        lastReceivedAt = loop.now
        decoder.append(bytes)
        batch {
            do {
                while closeError == nil {
                    // A response message is taken straight from the buffer; the rest as frames.
                    if let header = try decoder.nextCompleteHeader(), header.type == .message {
                        handleMessage(Array(decoder.takeMessagePayload(header)), on: header.streamID)
                        continue
                    }
                    guard let frame = try decoder.nextFrame() else { break }
                    handle(frame)
                }
            } catch {
                fail(RPCError(code: .internal, message: "protocol error from the server: \(error)"))
            }
        }
        decoder.releaseConsumedBytes()
    }

    /// Fails every call still open: UNAVAILABLE with the connection's error, or why the client closed it.
    public func connectionDidClose(_ connection: Connection, error: UVError?) {
        keepaliveTimer?.close()
        keepaliveTimer = nil
        let endedCleanly = closeError == nil && error == nil && goAway?.code == .ok
        var reason =
            closeError
            ?? RPCError(
                code: .unavailable,
                message: error.map { "connection failed: \($0)" } ?? "server closed the connection"
            )
        if closeError == nil, let failure = connection.securityFailure {
            reason.message = failure
            reason.isSecurityFailure = true
        }
        // Calls started from now on fail at once with the same reason (without it, one started
        // after the server hung up was written to nowhere and never ended).
        closeError = reason
        failCalls(reason)
        let onClose = self.onClose
        self.onClose = nil
        onClose?(endedCleanly ? nil : reason)
    }

    private func handle(_ frame: Frame) {
        switch frame {
        case .preface:
            break
        case .settings(let settings):
            let isFirst = serverSettings == nil
            serverSettings = settings
            if isFirst, let onReady {
                self.onReady = nil
                startKeepalive()
                onReady(.success(self))
            }
        case .message(let streamID, let payload, _):
            handleMessage(payload, on: streamID)
        case .callEnd(let streamID, let status):
            end(streamID, with: status.code == .ok ? nil : RPCError(status), sendCancel: false)
        case .ping(let payload):
            FrameEncoder.encode(.pong(payload), into: &outbound)
        case .goAway(let goAway):
            self.goAway = goAway
            // Calls the server never accepted may be retried elsewhere.
            for streamID in calls.keys where streamID > goAway.lastStreamID {
                let error = RPCError(
                    code: .unavailable,
                    message: "server going away: \(goAway.message)",
                    isRetryable: true
                )
                end(streamID, with: error, sendCancel: false)
            }
            if goAway.code != .ok {
                closeError = RPCError(code: goAway.code, message: goAway.message)
            }
        case .callStart, .cancel, .credit, .pong:
            break
        }
    }

    /// Looks at the connection a few times per keepalive period (only while calls are open: an idle
    /// connection has nothing waiting on it, and the server closes it after its idle timeout).
    private func startKeepalive() {
        guard let interval = configuration.keepaliveInterval else { return }
        let timeout = configuration.keepaliveTimeout
        let tick = max(.milliseconds(10), min(interval, timeout) / 2)
        let timer = LoopTimer(loop: loop)
        timer.start(after: tick, repeating: tick) { [weak self] in
            self?.checkKeepalive(
                interval: interval.wholeMillisecondsRoundedUp,
                timeout: timeout.wholeMillisecondsRoundedUp
            )
        }
        keepaliveTimer = timer
    }

    private func checkKeepalive(interval: UInt64, timeout: UInt64) {
        let now = loop.now
        if let sent = pingSentAt {
            // Any byte answers, not only the PONG: a server busy sending one large frame is alive.
            if lastReceivedAt >= sent {
                pingSentAt = nil
            } else if now - sent >= timeout {
                fail(
                    RPCError(
                        code: .unavailable,
                        message: "keepalive timeout: nothing from the server for \(timeout) ms after a PING"
                    )
                )
            }
            return
        }
        guard !calls.isEmpty, now - lastReceivedAt >= interval else { return }
        pingSentAt = now
        FrameEncoder.encode(.ping(now), into: &outbound)
        flushUnlessBatching()
    }

    private func handleMessage(_ payload: [UInt8], on streamID: StreamID) {
        guard let call = calls[streamID] else { return }
        switch call.kind {
        case .unary:
            call.response = payload
        case .stream(let onMessage, _, let automaticCredit):
            onMessage(payload)
            if automaticCredit {
                call.consumedSinceGrant += 1
                if call.consumedSinceGrant >= max(1, configuration.initialStreamCredit / 2) {
                    grantCredit(call.consumedSinceGrant, on: streamID)
                    call.consumedSinceGrant = 0
                }
            }
        }
    }

    /// Ends a call: runs its completion (unary: the response, or `error`) and forgets it.
    private func end(_ streamID: StreamID, with error: RPCError?, sendCancel: Bool) {
        guard let call = calls.removeValue(forKey: streamID) else { return }
        if sendCancel { FrameEncoder.encode(.cancel(streamID), into: &outbound) }
        complete(call, error: error)
        if isClosingWhenIdle && calls.isEmpty { close() }
    }

    private func complete(_ call: PendingCall, error: RPCError?) {
        switch call.kind {
        case .unary(let completion):
            if let error {
                completion(.failure(error))
            } else if let response = call.response {
                completion(.success(response))
            } else {
                completion(.failure(RPCError(code: .internal, message: "the server ended the call without a response")))
            }
        case .stream(_, let onEnd, _):
            onEnd(error)
        }
    }

    private func failCalls(_ error: RPCError) {
        let open = calls
        calls = [:]
        deadlines.close()
        for (_, call) in open.sorted(by: { $0.key < $1.key }) {
            complete(call, error: error)
        }
        if let onReady {
            self.onReady = nil
            onReady(.failure(error))
        }
    }

    private func fail(_ error: RPCError) {
        guard closeError == nil else { return }
        closeError = error
        failCalls(error)
        flush()
        connection.closeWhenWritesFlushed()
    }

    private func flushUnlessBatching() {
        if batchDepth == 0 { flush() }
    }

    private func flush() {
        guard !outbound.isEmpty, connection.state == .open else { return }
        do {
            try connection.write(outbound)
            outbound.removeAll(keepingCapacity: outbound.capacity <= 64 * 1024)
        } catch {
            outbound.removeAll()
            // Only a full outbound buffer is a limit; anything else (EPIPE, a reset) means the
            // connection is gone, which a caller may retry on a new one.
            let code: StatusCode = error == .noBufferSpace ? .resourceExhausted : .unavailable
            fail(RPCError(code: code, message: "cannot write to the server: \(error)"))
        }
    }
}
