import Foundation
import HomeProto
public import Logging
public import RPCClient
public import SwiftProtobuf
public import UV
import Wire

/// A typed client for `home.v1.HomeService` and `home.v1.AccountService`.
///
/// ```swift
/// let client = HomeClient(endpoint: .tcp(host: "127.0.0.1", port: 7420), token: token)
/// let home = try await client.addHome(named: "My Home")
/// let bedroom = try await client.home(home.uniqueIdentifier).addRoom(named: "卧室")
/// ```
///
/// It connects on the first call and again after the connection drops (the call that was in
/// flight fails; new calls reconnect). A server that has not completed the handshake within 10 s
/// fails the connecting call with UNAVAILABLE, and so does one that goes quiet while calls or
/// streams are open (a PING after 30 s without a byte from it, unanswered for 10 s). Every mutation carries a fresh idempotency key and is retried
/// with that same key when the connection failed or the server was draining, so a retried change
/// is applied once. Calls may run concurrently. Cancelling a task cancels its call on the server:
/// a call then fails with ``HomeClientError`` and status CANCELLED (calls throw only that), a
/// stream (``changes(_:)``, ``MessageStream``) throws `CancellationError`.
public actor HomeClient {
    /// Where the server listens.
    public let endpoint: Endpoint
    private let token: String
    /// Each call's time, connecting and retries included, unless the task's ``callOptions`` say
    /// otherwise (the server enforces what is left of it for each attempt).
    public let timeout: Duration?
    /// How a mutation is retried after a transport failure or a drain.
    public let retryPolicy: RetryPolicy
    /// The connection's settings: its frame size, handshake timeout and keepalive.
    public let connectionConfiguration: ClientConnection.Configuration
    /// Where the client tells of its connections (connecting, connected, dropped), its retries and
    /// its change streams' reconnects.
    public nonisolated let logger: Logger
    /// Sees every call when it finishes (``CallObserver``).
    public nonisolated let observer: (any CallObserver)?
    private var client: RPCClient?
    /// The connection on which a call with the token was answered: later calls there go without it.
    private var authenticated: RPCClient?
    private var connecting: Task<RPCClient, any Error>?
    /// Connections that used up their stream ids, closed by the server once their calls end (or by
    /// ``close()``).
    private var retired: [RPCClient] = []

    /// The trace id sent as `trace-id` metadata with every call made inside
    /// `HomeClient.$traceID.withValue(id) { ... }`: homed puts it in its log line for each of those
    /// calls (docs/PROTOCOL.md, "CALL_START"), so a service's request and the calls it made for it
    /// meet in the logs. Task-local, so concurrent requests sharing one client keep their own.
    @TaskLocal public static var traceID: String?

    /// The options of the calls made inside `HomeClient.$callOptions.withValue(options) { ... }`:
    /// a deadline, an idempotency key, metadata (``HomeClient/CallOptions``).
    @TaskLocal public static var callOptions = CallOptions()

    /// A client of the homed at `endpoint`; it connects on its first call.
    /// - Parameters:
    ///   - endpoint: where homed listens: `.tcp(host:port:)` or `.unix(path:)`.
    ///   - token: the bearer token (`hrt_...`): the owner's token file, or one issued to the account;
    ///     empty under mutual TLS when homed maps the client certificate to an account
    ///     (`--tls-client-identities`).
    ///   - timeout: each call's time, connecting and retries included (`nil`: none).
    ///   - retryPolicy: how a mutation is retried, with the same idempotency key, after the
    ///     connection failed or the server drained.
    ///   - tls: TLS to homed (``TLSContext/init(client:)``: the CA to trust, a certificate for
    ///     mutual TLS); `nil` connects in plain TCP, as to a loopback address or a Unix socket.
    ///   - connection: the connection's settings (the handshake timeout and the keepalive among them).
    ///   - logger: where the client logs: connections made and dropped at `info`, retries and
    ///     resends at `debug`, a change stream's reconnects at `info`. By default, nowhere.
    ///   - observer: told of every call when it finishes, for metrics (``CallObserver``).
    public init(
        endpoint: Endpoint,
        token: String,
        timeout: Duration? = .seconds(30),
        retryPolicy: RetryPolicy = .standard,
        tls: TLSContext? = nil,
        connection: ClientConnection.Configuration = ClientConnection.Configuration(),
        logger: Logger = Logger(label: "homerpc.client", factory: { _ in SwiftLogNoOpLogHandler() }),
        observer: (any CallObserver)? = nil
    ) {
        self.endpoint = endpoint
        self.token = token
        self.timeout = timeout
        self.retryPolicy = retryPolicy
        var connection = connection
        if let tls { connection.tls = tls }
        connectionConfiguration = connection
        var logger = logger
        logger[metadataKey: "homerpc.endpoint"] = "\(endpoint)"
        self.logger = logger
        self.observer = observer
    }

    /// How many times ``close()`` was called: a change stream begun before a close ends (returns
    /// `nil`) instead of reconnecting.
    private(set) var closings = 0
    /// The connection's state, told to every ``connectionStates()`` sequence as it changes.
    private var state = ConnectionState.idle {
        didSet {
            guard state != oldValue else { return }
            switch state {
            case .connected: logger.info("connected")
            case .disconnected(let reason): logger.info("disconnected", metadata: ["homerpc.reason": "\(reason)"])
            case .connecting: logger.debug("connecting")
            case .idle: logger.debug("closed")
            }
            for watcher in stateWatchers.values { watcher.yield(state) }
        }
    }
    private var stateWatchers: [Int: AsyncStream<ConnectionState>.Continuation] = [:]
    private var nextStateWatcher = 0

    /// The connection's state now, then each change (connecting, connected, disconnected with why,
    /// idle after ``close()``), until the sequence is dropped. A service shows it, or logs the
    /// reconnects a change stream goes through (``changes(_:)`` reconnects by itself).
    public func connectionStates() -> AsyncStream<ConnectionState> {
        let (states, continuation) = AsyncStream.makeStream(
            of: ConnectionState.self,
            bufferingPolicy: .bufferingNewest(64)
        )
        let key = nextStateWatcher
        nextStateWatcher += 1
        continuation.yield(state)
        stateWatchers[key] = continuation
        continuation.onTermination = { _ in Task { await self.stopWatchingState(key) } }
        return states
    }

    private func stopWatchingState(_ key: Int) {
        stateWatchers[key] = nil
    }

    /// Closes the connection and ends every change stream begun before (``changes(_:)``); a later
    /// call opens a new connection. A client dropped without it closes its connection too.
    public func close() async {
        closings += 1
        let current = client
        client = nil
        authenticated = nil
        await current?.close()
        for rpc in retired { await rpc.close() }
        retired = []
        state = .idle
    }

    // MARK: Calling

    /// Calls a read (or any method) once.
    public func call<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: String,
        _ request: Request,
        returning: Response.Type = Response.self,
        idempotencyKey: String? = nil
    ) async throws(HomeClientError) -> Response {
        let started = ContinuousClock.now
        var attempts = 0
        do {
            let response: Response = try await call(
                method,
                request,
                idempotencyKey: idempotencyKey,
                before: deadline(),
                attempts: &attempts
            )
            observe(method, since: started, attempts: attempts, key: idempotencyKey, error: nil)
            return response
        } catch {
            observe(method, since: started, attempts: attempts, key: idempotencyKey, error: error)
            throw error
        }
    }

    /// Tells the ``observer`` of a finished call.
    private func observe(
        _ method: String,
        since started: ContinuousClock.Instant,
        attempts: Int,
        key: String?,
        error: HomeClientError?
    ) {
        guard let observer else { return }
        observer.callFinished(
            CallRecord(
                method: method,
                status: error?.status ?? .ok,
                error: error,
                duration: .now - started,
                attempts: attempts,
                idempotencyKey: key
            )
        )
    }

    /// How often a call that provably was not sent goes again on a new connection.
    private static let maxResends = 3

    /// The deadline of a call made now: the task's ``CallOptions/timeout``, else the client's.
    private func deadline() -> ContinuousClock.Instant? {
        (Self.callOptions.timeout ?? timeout).map { .now + $0 }
    }

    /// What is left until `deadline` for the server to enforce; DEADLINE_EXCEEDED when nothing is.
    private static func remaining(before deadline: ContinuousClock.Instant?) throws(HomeClientError) -> Duration? {
        guard let deadline else { return nil }
        let left = deadline - .now
        guard left > .zero else {
            // Asked before the call goes out (to connect, or to send): nothing was sent.
            var failure = HomeClientError(status: .deadlineExceeded, message: "the call's deadline passed")
            failure.wasNotSent = true
            throw failure
        }
        return left
    }

    private func call<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: String,
        _ request: Request,
        idempotencyKey: String?,
        before deadline: ContinuousClock.Instant?,
        attempts: inout Int
    ) async throws(HomeClientError) -> Response {
        var metadata = traceMetadata
        if let idempotencyKey {
            metadata.append(MetadataEntry(key: "idempotency-key", value: Array(idempotencyKey.utf8)))
        }
        var resends = 0
        while true {
            let rpc = try await connection(before: deadline)
            attempts += 1
            // The token goes with the calls made until the connection has authenticated: the server
            // keeps the connection's principal (docs/PROTOCOL.md, "Authentication").
            let sendsToken = authenticated !== rpc
            do {
                let response: Response = try await ProtoCall.unary(
                    rpc,
                    method,
                    request,
                    timeout: try Self.remaining(before: deadline),
                    metadata: sendsToken ? authorization + metadata : metadata
                )
                if sendsToken { authenticated = rpc }
                return response
            } catch {
                if sendsToken, error.homeKitCode != nil { authenticated = rpc }
                // Taken for authenticated by a call that does not authenticate (a health check):
                // the same call again, with the token.
                if !sendsToken, error.status == .unauthenticated, authenticated === rpc {
                    authenticated = nil
                    continue
                }
                if error.usedUpStreamIDs {
                    // Its open calls finish there; the server closes it after them.
                    retireConnection(rpc)
                } else if error.status == .unavailable && error.homeKitCode == nil {
                    // A transport failure (no HomeKit details): the next call reconnects.
                    dropConnection(rpc, because: error)
                }
                // A connection that had closed before the call (the server restarted, or dropped
                // it as idle) sent nothing: the call goes again, on a new one, whatever it is. A few
                // times: on a loaded machine the new connection can idle out before the call goes.
                guard error.wasNotSent, resends < Self.maxResends else { throw error }
                resends += 1
                logger.debug(
                    "sending the call again: it never left its connection",
                    metadata: ["homerpc.method": "\(method)", "homerpc.error": "\(error)"]
                )
            }
        }
    }

    /// Calls a mutation with an idempotency key (the task's ``CallOptions/idempotencyKey``, else a
    /// fresh one), retrying with the same key after a transport failure or a drain, as the
    /// ``retryPolicy`` says and within the call's deadline: the change is applied at most once,
    /// and the answer is the first outcome.
    public func mutate<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: String,
        _ request: Request,
        returning: Response.Type = Response.self
    ) async throws(HomeClientError) -> Response {
        let key = Self.callOptions.idempotencyKey ?? UUID.random().uuidString
        let started = ContinuousClock.now
        let deadline = deadline()
        var attempts = 0
        var retry = 0
        while true {
            do {
                let response: Response = try await call(
                    method,
                    request,
                    idempotencyKey: key,
                    before: deadline,
                    attempts: &attempts
                )
                observe(method, since: started, attempts: attempts, key: key, error: nil)
                return response
            } catch {
                retry += 1
                let wait = retryPolicy.backoff(beforeRetry: retry)
                guard error.status == .unavailable, error.homeKitCode == nil, retry < retryPolicy.maxAttempts,
                    deadline.map({ .now + wait < $0 }) ?? true
                else {
                    observe(method, since: started, attempts: attempts, key: key, error: error)
                    throw error
                }
                logger.debug(
                    "retrying a mutation under its idempotency key",
                    metadata: [
                        "homerpc.method": "\(method)", "homerpc.idempotency_key": "\(key)",
                        "homerpc.retry": "\(retry)", "homerpc.wait": "\(wait)", "homerpc.error": "\(error)",
                    ]
                )
                try? await Task.sleep(for: wait)
            }
        }
    }

    /// Opens a server stream on the current connection (connecting first if needed).
    func openStream<Request: SwiftProtobuf.Message>(
        _ method: String,
        _ request: Request
    ) async throws(HomeClientError) -> ResponseStream {
        let bytes = try ProtoCall.encode(request)
        let rpc = try await connection()
        return rpc.serverStream(method, request: bytes, metadata: authorization + traceMetadata)
    }

    /// The task's trace id, if it set one, and its ``CallOptions/metadata``.
    private var traceMetadata: [MetadataEntry] {
        var entries = Self.callOptions.metadata.map { MetadataEntry(key: $0.key, value: Array($0.value.utf8)) }
        if let traceID = Self.traceID { entries.append(MetadataEntry(key: "trace-id", value: Array(traceID.utf8))) }
        return entries
    }

    /// A stream failed for a transport reason, or found its connection's stream ids used up: the
    /// next call or stream connects afresh.
    func connectionFailed(_ error: HomeClientError) {
        guard let client else { return }
        if error.usedUpStreamIDs { retireConnection(client) } else { dropConnection(client, because: error) }
    }

    /// The token's metadata; none for an empty token (a client certificate mapped to an account
    /// authenticates the connection instead).
    private var authorization: [MetadataEntry] {
        token.isEmpty ? [] : [MetadataEntry(key: "authorization", value: Array("Bearer \(token)".utf8))]
    }

    /// The connection, made if need be. A connect this call starts gives up by `deadline` (its
    /// handshake timeout shortened to what is left): a server that does not answer fails the call
    /// within its deadline, not only at the connection's handshake timeout.
    private func connection(
        before deadline: ContinuousClock.Instant? = nil
    ) async throws(HomeClientError)
        -> RPCClient
    {
        if let client { return client }
        let task: Task<RPCClient, any Error>
        if let connecting {
            task = connecting
        } else {
            var configuration = connectionConfiguration
            if let left = try Self.remaining(before: deadline) {
                configuration.handshakeTimeout = min(configuration.handshakeTimeout, left)
            }
            let endpoint = self.endpoint
            task = Task { try await RPCClient.connect(to: endpoint, configuration: configuration) }
            connecting = task
            state = .connecting
        }
        do {
            let made = try await task.value
            if connecting == task { connecting = nil }
            if client == nil { client = made }
            state = .connected
            return client!
        } catch {
            if connecting == task { connecting = nil }
            // Nothing was sent: the call may go again as it is, whatever it is.
            let rpcError = error as? RPCError
            var failure =
                if let rpcError { HomeClientError(rpcError) } else {
                    HomeClientError(status: .unavailable, message: "\(error)")
                }
            failure.wasNotSent = true
            // A server not answering may answer later; a certificate not trusted will not be.
            failure.isRetryable = rpcError?.isSecurityFailure != true
            state = .disconnected(reason: failure.message)
            throw failure
        }
    }

    private func dropConnection(_ rpc: RPCClient, because error: HomeClientError) {
        if authenticated === rpc { authenticated = nil }
        guard client === rpc else { return }
        client = nil
        state = .disconnected(reason: error.message)
        Task { await rpc.close() }
    }

    /// Takes no more calls on `rpc` but leaves its open calls and streams to finish.
    private func retireConnection(_ rpc: RPCClient) {
        if authenticated === rpc { authenticated = nil }
        guard client === rpc else { return }
        client = nil
        retired.append(rpc)
    }
}
