import Foundation
import HomeProto
public import RPCClient
public import SwiftProtobuf
public import UV
import Wire

/// A typed client for `home.v1.HomeService` and `home.v1.AccountService`.
///
/// ```swift
/// let client = HomeClient(endpoint: .tcp(host: "127.0.0.1", port: 7420), token: token)
/// let home = try await client.addHome(named: "My Home")
/// let bedroom = try await client.home(home.id.uuid).addRoom(named: "卧室")
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
    /// The deadline of each call, enforced by the server.
    public let timeout: Duration?
    /// How many times a mutation is retried after a transport failure.
    public let retries: Int
    /// The connection's settings: its frame size, handshake timeout and keepalive.
    public let connectionConfiguration: ClientConnection.Configuration
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

    /// - Parameters:
    ///   - token: the bearer token (`hrt_...`): the owner's token file, or one issued to the account.
    ///   - timeout: each call's deadline (`nil`: none).
    ///   - retries: how often a mutation is retried, with the same idempotency key, after the
    ///     connection failed or the server drained.
    ///   - connection: the connection's settings (the handshake timeout and the keepalive among them).
    public init(
        endpoint: Endpoint,
        token: String,
        timeout: Duration? = .seconds(30),
        retries: Int = 3,
        connection: ClientConnection.Configuration = ClientConnection.Configuration()
    ) {
        self.endpoint = endpoint
        self.token = token
        self.timeout = timeout
        self.retries = retries
        connectionConfiguration = connection
    }

    /// How many times ``close()`` was called: a change stream begun before a close ends (returns
    /// `nil`) instead of reconnecting.
    private(set) var closings = 0

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
    }

    // MARK: Calling

    /// Calls a read (or any method) once.
    public func call<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: String,
        _ request: Request,
        returning: Response.Type = Response.self,
        idempotencyKey: String? = nil
    ) async throws(HomeClientError) -> Response {
        var metadata = traceMetadata
        if let idempotencyKey {
            metadata.append(MetadataEntry(key: "idempotency-key", value: Array(idempotencyKey.utf8)))
        }
        var resent = false
        while true {
            let rpc = try await connection()
            // The token goes with the calls made until the connection has authenticated: the server
            // keeps the connection's principal (docs/PROTOCOL.md, "Authentication").
            let sendsToken = authenticated !== rpc
            do {
                let response: Response = try await ProtoCall.unary(
                    rpc,
                    method,
                    request,
                    timeout: timeout,
                    metadata: sendsToken ? [authorization] + metadata : metadata
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
                    dropConnection(rpc)
                }
                // A connection that had closed before the call (the server restarted, or dropped
                // it) sent nothing: the call goes once more, on a new one, whatever it is.
                guard error.wasNotSent, !resent else { throw error }
                resent = true
            }
        }
    }

    /// Calls a mutation with a fresh idempotency key, retrying with the same key after a transport
    /// failure or a drain: the change is applied at most once, and the answer is the first outcome.
    public func mutate<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: String,
        _ request: Request,
        returning: Response.Type = Response.self
    ) async throws(HomeClientError) -> Response {
        let key = UUID.random().uuidString
        var attempt = 0
        while true {
            do {
                return try await call(method, request, returning: Response.self, idempotencyKey: key)
            } catch {
                attempt += 1
                guard error.status == .unavailable, error.homeKitCode == nil, attempt <= retries else { throw error }
                try? await Task.sleep(for: .milliseconds(50 << min(attempt, 5)))
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
        return rpc.serverStream(method, request: bytes, metadata: [authorization] + traceMetadata)
    }

    /// The task's trace id, if it set one.
    private var traceMetadata: [MetadataEntry] {
        guard let traceID = Self.traceID else { return [] }
        return [MetadataEntry(key: "trace-id", value: Array(traceID.utf8))]
    }

    /// A stream failed for a transport reason, or found its connection's stream ids used up: the
    /// next call or stream connects afresh.
    func connectionFailed(_ error: HomeClientError) {
        guard let client else { return }
        if error.usedUpStreamIDs { retireConnection(client) } else { dropConnection(client) }
    }

    private var authorization: MetadataEntry {
        MetadataEntry(key: "authorization", value: Array("Bearer \(token)".utf8))
    }

    private func connection() async throws(HomeClientError) -> RPCClient {
        if let client { return client }
        let task: Task<RPCClient, any Error>
        if let connecting {
            task = connecting
        } else {
            let (endpoint, configuration) = (self.endpoint, connectionConfiguration)
            task = Task { try await RPCClient.connect(to: endpoint, configuration: configuration) }
            connecting = task
        }
        do {
            let made = try await task.value
            if connecting == task { connecting = nil }
            if client == nil { client = made }
            return client!
        } catch {
            if connecting == task { connecting = nil }
            // Nothing was sent: the call may go again as it is, whatever it is.
            var failure =
                if let error = error as? RPCError { HomeClientError(error) } else {
                    HomeClientError(status: .unavailable, message: "\(error)")
                }
            failure.wasNotSent = true
            failure.isRetryable = true
            throw failure
        }
    }

    private func dropConnection(_ rpc: RPCClient) {
        if authenticated === rpc { authenticated = nil }
        guard client === rpc else { return }
        client = nil
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
