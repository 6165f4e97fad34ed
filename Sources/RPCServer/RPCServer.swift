public import Logging
public import TLS
public import UV
import Wire

/// Serves RPC calls over the HomeRPC protocol (docs/PROTOCOL.md) on one event loop.
///
/// Everything runs on the loop's thread: accepting, decoding, the handlers, encoding. The server knows
/// nothing of homes; it dispatches full method names to handlers from a ``MethodRegistry``.
///
/// ```swift
/// var registry = MethodRegistry()
/// registry.register("demo.v1.Echo/Say", kind: .unary) { call, request in call.respond(Array(request)) }
/// let loop = try EventLoop()
/// let server = RPCServer(loop: loop, configuration: ServerConfiguration(), registry: registry)
/// let endpoint = try server.listen(on: .tcp(host: "127.0.0.1", port: 7420))
/// loop.run()   // until beginGracefulShutdown() has drained every connection
/// ```
public final class RPCServer {
    public let loop: EventLoop
    public let configuration: ServerConfiguration
    public let registry: MethodRegistry
    let authenticator: (any Authenticator)?
    public let metrics: ServerMetrics
    let logger: Logger
    private var listeners: [Listener] = []
    private var connections: [Int: any ServedConnection] = [:]
    /// New connections, admitted (read from) a batch per loop iteration.
    let admissions: PacedQueue
    /// Connections whose peers closed, torn down a batch per loop iteration.
    let teardowns: PacedQueue
    /// What every connection holds for its peer, bounded by ``ServerConfiguration/maxBufferedBytes``.
    let buffers: BufferBudget
    private var nextConnectionID = 0
    private var ticker: LoopTimer?
    /// Every open call's deadline (or wait for its request), on one timer.
    private(set) lazy var callTimers = CallTimers(loop: loop) { call in call.connection?.timerExpired(for: call) }
    public private(set) var isShuttingDown = false
    private var shutdownCompletion: (() -> Void)?

    /// - Parameters:
    ///   - authenticator: when given, every connection must authenticate with its first call
    ///     (`authorization: Bearer <token>` metadata); calls before that fail with UNAUTHENTICATED.
    public init(
        loop: EventLoop,
        configuration: ServerConfiguration,
        registry: MethodRegistry,
        authenticator: (any Authenticator)? = nil,
        logger: Logger = Logger(label: "homerpc.server")
    ) {
        self.loop = loop
        self.configuration = configuration
        self.registry = registry
        self.authenticator = authenticator
        self.logger = logger
        methodNames = registry.namesByIndex
        metrics = ServerMetrics(methodNames: methodNames)
        outputBeforePolling = OutputBeforePolling(loop: loop)
        admissions = PacedQueue(loop: loop) { $0.admit() }
        teardowns = PacedQueue(loop: loop) { $0.tearDownAfterPeerClosed() }
        buffers = BufferBudget(limit: configuration.maxBufferedBytes)
        requiresAuthentication = methodNames.map { !configuration.unauthenticatedMethods.contains($0) }
        logsEveryCall = logger.logLevel <= .debug
    }

    /// Each method's full name, by registry index.
    let methodNames: [String]

    /// Whether each method (by registry index) needs an authenticated connection: decided once
    /// here, so a call does not hash its method name into the configuration's set.
    let requiresAuthentication: [Bool]

    /// Whether every call's end is logged (the logger is at debug or finer): decided once here, so a
    /// call pays a flag check. Server faults are logged whatever the level (``ServerConnection``).
    let logsEveryCall: Bool

    /// Connections currently open.
    public var connectionCount: Int { connections.count }

    /// Calls started and not yet ended, on every connection (counted when asked: an info call's
    /// walk of the connections costs less than a counter kept on every call's path).
    public var openCallCount: Int { connections.values.reduce(0) { $0 + $1.openCallCount } }

    /// Bytes all connections hold for their peers now: input not yet decoded, output the kernel has
    /// not taken, open calls' metadata (bounded by ``ServerConfiguration/maxBufferedBytes``).
    public var bufferedByteCount: Int { buffers.heldByteCount }

    /// Nesting depth of ``batchingOutput(_:)``.
    private var outputBatchDepth = 0
    /// Connections with output held back by the batch in progress, flushed when it ends.
    private var connectionsToFlush: [any ServedConnection] = []

    /// Runs `body` and writes the output it produced on every connection once, at the end: for work
    /// that answers many calls at once outside a read (a commit that acknowledges a batch of
    /// mutations and publishes their events), so each connection gets one write, not one per
    /// message. Loop thread only.
    public func batchingOutput(_ body: () -> Void) {
        outputBatchDepth += 1
        body()
        outputBatchDepth -= 1
        guard outputBatchDepth == 0 else { return }
        if !connectionsToFlush.isEmpty {
            let pending = connectionsToFlush
            connectionsToFlush.removeAll(keepingCapacity: true)
            for connection in pending { connection.flushHeldOutput() }
        }
        if !callsEndedInBatch.isEmpty { recordCallsEndedInBatch() }
    }

    /// Calls answered inside the output batch in progress, timed when it ends: their answers leave
    /// then, and one clock read serves them all (a read per call, a commit's hundreds of answers,
    /// was 2.5% of a loaded loop's time).
    private var callsEndedInBatch: [(methodIndex: Int, code: StatusCode, startedAt: UInt64)] = []

    /// Records a call's end in the metrics, now or, inside ``batchingOutput(_:)``, when it ends.
    func recordCallEnd(methodIndex: Int, code: StatusCode, startedAt: UInt64) {
        guard outputBatchDepth > 0 else {
            metrics.recordCall(methodIndex: methodIndex, code: code, startedAt: startedAt)
            return
        }
        callsEndedInBatch.append((methodIndex, code, startedAt))
    }

    private func recordCallsEndedInBatch() {
        let now = EventLoop.monotonicNanoseconds
        for call in callsEndedInBatch {
            metrics.recordCalls(methodIndex: call.methodIndex, code: call.code, nanoseconds: now &- call.startedAt)
        }
        callsEndedInBatch.removeAll(keepingCapacity: true)
    }

    /// Replies to reads, held until the loop is about to poll again.
    let outputBeforePolling: OutputBeforePolling

    /// Runs `task` once just before the loop next polls, after the replies held for that moment are
    /// written: for work that should wait until the loop has handled everything ready (a store
    /// starting the commit of the mutations those reads made). Loop thread only.
    public func runBeforePolling(_ task: @escaping () -> Void) {
        outputBeforePolling.runAfterOutput(task)
    }

    /// Whether output should wait for the batch in progress; registers `connection` to be flushed.
    func holdOutput(of connection: any ServedConnection) -> Bool {
        guard outputBatchDepth > 0 else { return false }
        connectionsToFlush.append(connection)
        return true
    }

    /// What a listener's clients speak.
    public enum Door: Sendable, Hashable, CustomStringConvertible {
        /// Our protocol (docs/PROTOCOL.md).
        case homeRPC
        /// gRPC over cleartext HTTP/2 (prior knowledge), onto the same methods.
        case grpc

        public var description: String {
            switch self {
            case .homeRPC: "homerpc"
            case .grpc: "grpc"
            }
        }
    }

    /// What each listener's clients speak, and the TLS they speak it over (`nil`: plain).
    private var setups: [ObjectIdentifier: (door: Door, tls: TLSContext?)] = [:]

    /// Starts accepting on `endpoint`, for clients that speak `door`'s protocol, over TLS when `tls`
    /// is given (a server context whose ALPN names suit the door).
    /// - Returns: the bound endpoint (with the real port when `endpoint` asked for port 0).
    @discardableResult
    public func listen(
        on endpoint: Endpoint,
        door: Door = .homeRPC,
        tls: TLSContext? = nil
    ) throws(UVError)
        -> Endpoint
    {
        precondition(!isShuttingDown, "listen after shutdown began")
        let listener = try Listener.listen(on: endpoint, loop: loop, delegate: self)
        listeners.append(listener)
        setups[ObjectIdentifier(listener)] = (door, tls)
        startTimersIfNeeded()
        logger.info(
            "listening",
            metadata: ["endpoint": "\(listener.endpoint)", "protocol": "\(door)", "tls": "\(tls != nil)"]
        )
        return listener.endpoint
    }

    /// Makes new connections to `door`'s TLS listeners use `context` (a reloaded certificate);
    /// connections already open keep the session they have.
    public func replaceTLSContext(_ context: TLSContext, on door: Door) {
        for (listener, setup) in setups where setup.door == door && setup.tls != nil {
            setups[listener] = (door, context)
        }
    }

    private func startTimersIfNeeded() {
        guard ticker == nil else { return }
        let ticker = LoopTimer(loop: loop)
        let interval = Duration.milliseconds(configuration.timerResolutionMilliseconds)
        ticker.start(after: interval, repeating: interval) { [unowned self] in self.tick() }
        self.ticker = ticker
    }

    /// Stops accepting, sends every connection a GOAWAY, lets calls in flight finish within the grace
    /// period, and refuses new ones with UNAVAILABLE (retryable). `completion` runs once every
    /// connection has closed; the server's handles are closed by then, so ``EventLoop/run()`` returns
    /// if nothing else is running on the loop.
    public func beginGracefulShutdown(completion: (() -> Void)? = nil) {
        loop.assertOnLoopThread()
        guard !isShuttingDown else { return }
        isShuttingDown = true
        shutdownCompletion = completion
        logger.info("draining", metadata: ["connections": "\(connections.count)"])
        for listener in listeners { listener.close() }
        listeners = []
        for connection in connections.values { connection.drain() }
        finishShutdownIfDrained()
    }

    private func finishShutdownIfDrained() {
        guard isShuttingDown, connections.isEmpty else { return }
        ticker?.close()
        ticker = nil
        callTimers.close()
        outputBeforePolling.close()
        admissions.close()
        teardowns.close()
        logger.info("stopped")
        let completion = shutdownCompletion
        shutdownCompletion = nil
        completion?()
    }

    // MARK: Connections

    private func tick() {
        let now = loop.now
        for connection in connections.values { connection.tick(now: now) }
    }

    /// Closes the connections that hold the most until the rest fit the buffer budget.
    func evictLargestBufferHolders() {
        buffers.evictLargest(among: connections.values)
    }

    func connectionDidClose(_ connection: any ServedConnection, reason: CloseReason, error: UVError?) {
        connections.removeValue(forKey: connection.id)
        metrics.connectionClosed(reason)
        if let failure = Self.tlsFailure(of: connection.connection, closedWith: reason) {
            metrics.tlsFailed()
            logger.notice(
                "TLS failed",
                metadata: [
                    "id": "\(connection.id)", "reason": "\(failure)",
                    "peer": "\((connection.connection.security as? TLSSession)?.peer ?? "unknown")",
                ]
            )
            return finishShutdownIfDrained()
        }
        switch reason {
        case .peerClosed, .drained, .idleTimeout:
            logger.debug("connection closed", metadata: ["id": "\(connection.id)", "reason": "\(reason)"])
        default:
            log(connection: connection, closedWith: reason)
        }
        finishShutdownIfDrained()
    }

    /// Why a connection's TLS failed, if it did: its session's error, or a close (a timeout, the
    /// peer hanging up) before its handshake finished.
    private static func tlsFailure(of connection: Connection, closedWith reason: CloseReason) -> String? {
        if let failure = connection.securityFailure { return failure }
        guard let session = connection.security as? TLSSession, !session.isHandshakeComplete else { return nil }
        return "the TLS handshake did not finish (\(reason))"
    }

    func log(connection: any ServedConnection, closedWith reason: CloseReason) {
        logger.notice("closing connection", metadata: ["id": "\(connection.id)", "reason": "\(reason)"])
    }

    /// Answers a connection over the limit with our preface and a GOAWAY saying why, then closes it.
    private func reject(_ connection: Connection) {
        var farewell: [UInt8] = []
        FrameEncoder.encode(.preface(Preface()), into: &farewell)
        FrameEncoder.encode(.goAway(CloseReason.tooManyConnections.goAway(lastStreamID: .connection)), into: &farewell)
        connection.delegate = RejectedConnection()
        try? connection.write(farewell)
        connection.closeWhenWritesFlushed()
    }
}

extension RPCServer: ListenerDelegate {
    public func listener(_ listener: Listener, didAccept connection: Connection) {
        guard let setup = setups[ObjectIdentifier(listener)] else { return connection.close() }
        let speaksGRPC = setup.door == .grpc
        if let tls = setup.tls { secure(connection, with: tls) }
        guard connections.count < configuration.maxConnections, !isShuttingDown else {
            if speaksGRPC { GRPCConnection.reject(connection) } else { reject(connection) }
            metrics.connectionRejected()
            return
        }
        metrics.connectionAccepted()
        nextConnectionID += 1
        if speaksGRPC {
            let grpcConnection = GRPCConnection(server: self, connection: connection, id: nextConnectionID)
            connections[nextConnectionID] = grpcConnection
            connection.delegate = grpcConnection
            admissions.add(grpcConnection)
        } else {
            let serverConnection = ServerConnection(server: self, connection: connection, id: nextConnectionID)
            connections[nextConnectionID] = serverConnection
            connection.delegate = serverConnection
            admissions.add(serverConnection)
        }
    }

    /// Puts a TLS session on an accepted connection: its handshake runs as its first bytes arrive,
    /// before any decoder sees them.
    private func secure(_ connection: Connection, with context: TLSContext) {
        let session = context.makeSession()
        session.peer = (try? connection.remoteEndpoint()).map { "\($0)" }
        session.onHandshakeComplete = { [metrics] _ in metrics.tlsHandshakeCompleted() }
        do {
            try connection.secure(with: session)
        } catch {
            connection.close()  // the peer went away already
        }
    }

    public func listener(_ listener: Listener, didFailToAccept error: UVError) {
        logger.warning("accept failed", metadata: ["error": "\(error)"])
    }
}

/// The delegate of a connection refused at accept: it ignores input until the farewell is written.
private final class RejectedConnection: ConnectionDelegate {
    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {}
    func connectionDidClose(_ connection: Connection, error: UVError?) {}
}
