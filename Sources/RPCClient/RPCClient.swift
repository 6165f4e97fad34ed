import Foundation
public import UV
public import Wire

/// An async/await client for one HomeRPC connection, usable from any task.
///
/// It runs its own event loop on a dedicated thread; calls travel to it through a ``Waker`` and their
/// results come back through continuations. Many calls may be in flight at once; they share the
/// connection. Cancelling the calling task cancels the call on the server.
///
/// ```swift
/// let client = try await RPCClient.connect(to: .tcp(host: "127.0.0.1", port: 7420))
/// let reply = try await client.unary("home.v1.Health/Check", request: [], timeout: .seconds(1))
/// for try await event in client.serverStream("home.v1.HomeService/Subscribe", request: bytes) { … }
/// await client.close()
/// ```
public final class RPCClient: Sendable {
    /// Work to run on the loop thread, with the connection.
    typealias Command = @Sendable (LoopSide) -> Void

    private let commands: Waker<Command>
    /// Signalled when the loop thread has closed its loop.
    let stopped: DispatchSemaphore
    let initialStreamCredit: UInt32

    private init(commands: Waker<Command>, stopped: DispatchSemaphore, initialStreamCredit: UInt32) {
        self.commands = commands
        self.stopped = stopped
        self.initialStreamCredit = initialStreamCredit
    }

    /// Connects and completes the handshake.
    /// - Throws: ``RPCError`` with UNAVAILABLE if the server cannot be reached, INVALID_ARGUMENT for an
    ///   endpoint that is not an IP literal or a socket path.
    public static func connect(
        to endpoint: Endpoint,
        configuration: ClientConnection.Configuration = ClientConnection.Configuration()
    ) async throws(RPCError) -> RPCClient {
        let result: Result<RPCClient, RPCError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                // Named from inside: Foundation on Linux names only the current thread (so it shows
                // in top, gdb and /proc/PID/task/*/comm).
                Thread.current.name = "homerpc-client"
                LoopSide.run(endpoint: endpoint, configuration: configuration) { result in
                    continuation.resume(returning: result)
                }
            }
            thread.start()
        }
        return try result.get()
    }

    /// A client dropped without ``close()`` still stops its loop thread (without waiting for it):
    /// a service that makes clients as it goes must not collect threads. Streams and calls in
    /// flight hold the client, so this comes only after they ended.
    deinit {
        _ = commands.send { side in side.shutDown() }
    }

    /// Makes the client once the loop thread is connected (called on that thread).
    static func make(side: LoopSide) -> RPCClient {
        RPCClient(
            commands: side.commands,
            stopped: side.stopped,
            initialStreamCredit: side.connection.configuration.initialStreamCredit
        )
    }

    /// Calls a unary method.
    /// - Parameter timeout: the call's deadline, enforced by the server (DEADLINE_EXCEEDED).
    /// - Throws: ``RPCError``: the server's status, CANCELLED if the task was cancelled, UNAVAILABLE if
    ///   the connection is gone.
    public func unary(
        _ method: String,
        request: [UInt8],
        timeout: Duration? = nil,
        metadata: [MetadataEntry] = []
    ) async throws(RPCError) -> [UInt8] {
        let handle = CallHandle()
        let result: Result<[UInt8], RPCError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                start(method, request, timeout, metadata, handle) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            cancel(handle)
        }
        return try result.get()
    }

    /// Calls a unary method without waiting: the call is on its way to the loop thread when this
    /// returns, and `completion` runs there with the response or the failure. For a caller that
    /// answers many messages and needs no reply to go on (a simulated accessory acknowledging
    /// commands): no task and no thread hop per call.
    public func unary(
        _ method: String,
        request: [UInt8],
        timeout: Duration? = nil,
        metadata: [MetadataEntry] = [],
        completion: @escaping @Sendable (Result<[UInt8], RPCError>) -> Void
    ) {
        start(method, request, timeout, metadata, CallHandle(), completion)
    }

    /// Hands a unary call to the loop thread; `completion` runs exactly once.
    private func start(
        _ method: String,
        _ request: [UInt8],
        _ timeout: Duration?,
        _ metadata: [MetadataEntry],
        _ handle: CallHandle,
        _ completion: @escaping @Sendable (Result<[UInt8], RPCError>) -> Void
    ) {
        let timeoutMilliseconds = Self.milliseconds(timeout)
        launch(
            handle,
            failing: { completion(.failure($0)) },
            begin: { connection in
                connection.unary(
                    method,
                    request: request,
                    timeoutMilliseconds: timeoutMilliseconds,
                    metadata: metadata,
                    completion: completion
                )
            }
        )
    }

    /// Hands a call to the loop thread (or, called there, starts it at once), where `begin` starts it
    /// on the connection and returns its stream id; `fail` runs instead if the caller cancelled it
    /// first or the client is closed.
    private func launch(
        _ handle: CallHandle,
        failing fail: @escaping @Sendable (RPCError) -> Void,
        begin: @escaping @Sendable (ClientConnection) -> StreamID
    ) {
        let sent = commands.sendOrHandle { side in
            guard !handle.isCancelled else {
                fail(.cancelledByCaller)
                return
            }
            handle.streamID = begin(side.connection)
        }
        if !sent { fail(.clientClosed) }
    }

    /// Calls a server-streaming method. The messages arrive as the sequence is iterated; the server
    /// may run at most the client's initial stream credit ahead of the consumer.
    public func serverStream(
        _ method: String,
        request: [UInt8],
        timeout: Duration? = nil,
        metadata: [MetadataEntry] = []
    ) -> ResponseStream {
        let handle = CallHandle()
        let buffer = StreamBuffer(client: self, handle: handle)
        let timeoutMilliseconds = Self.milliseconds(timeout)
        launch(
            handle,
            failing: { buffer.finish($0) },
            begin: { connection in
                connection.serverStream(
                    method,
                    request: request,
                    timeoutMilliseconds: timeoutMilliseconds,
                    metadata: metadata,
                    automaticCredit: false,
                    onMessage: { buffer.deliver($0) },
                    onEnd: { buffer.finish($0) }
                )
            }
        )
        return ResponseStream(buffer: buffer)
    }

    /// Calls a server-streaming method with callbacks instead of a sequence: `onMessage` runs on the
    /// loop thread for each message, and credit for the next is granted as soon as it returns; `onEnd`
    /// runs there once, with `nil` for OK. For a caller that handles each message at once (a simulated
    /// accessory answering commands): no task and no thread hop per message.
    /// - Returns: the call, to cancel it.
    public func serverStream(
        _ method: String,
        request: [UInt8],
        timeout: Duration? = nil,
        metadata: [MetadataEntry] = [],
        onMessage: @escaping @Sendable ([UInt8]) -> Void,
        onEnd: @escaping @Sendable (RPCError?) -> Void
    ) -> StreamingCall {
        let handle = CallHandle()
        let timeoutMilliseconds = Self.milliseconds(timeout)
        launch(handle, failing: onEnd) { connection in
            connection.serverStream(
                method,
                request: request,
                timeoutMilliseconds: timeoutMilliseconds,
                metadata: metadata,
                automaticCredit: true,
                onMessage: onMessage,
                onEnd: onEnd
            )
        }
        return StreamingCall(client: self, handle: handle)
    }

    /// Tells the server to stop a call (no-op once it ended).
    func cancel(_ handle: CallHandle) {
        // Queued even on the loop thread: a cancelled call's callbacks must not run inside the code
        // that cancels it.
        commands.send { side in
            handle.isCancelled = true
            if let streamID = handle.streamID { side.connection.cancel(streamID) }
        }
    }

    /// Grants the server more messages on a stream.
    func grantCredit(_ increment: UInt32, for handle: CallHandle) {
        commands.sendOrHandle { side in
            if let streamID = handle.streamID { side.connection.grantCredit(increment, on: streamID) }
        }
    }

    /// Closes the connection (calls in flight fail with UNAVAILABLE) and stops the loop thread.
    public func close() async {
        let sent = commands.send { side in side.shutDown() }
        guard sent else { return }
        let stopped = self.stopped
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                stopped.wait()
                stopped.signal()
                continuation.resume()
            }
        }
    }

    /// The wire's timeout: 0 for none, else at least 1 ms (a zero timeout means "already due").
    private static func milliseconds(_ timeout: Duration?) -> UInt32 {
        guard let timeout else { return 0 }
        return UInt32(clamping: max(1, timeout.wholeMillisecondsRoundedUp))
    }
}

/// Identifies a call across threads. Its fields are read and written only on the loop thread.
/// A server-streaming call started with callbacks (``RPCClient/serverStream(_:request:timeout:metadata:onMessage:onEnd:)``).
public struct StreamingCall: Sendable {
    let client: RPCClient
    let handle: CallHandle

    /// Tells the server to stop the call; `onEnd` then runs with CANCELLED, unless the call had ended.
    public func cancel() {
        client.cancel(handle)
    }
}

final class CallHandle: @unchecked Sendable {
    var streamID: StreamID?
    var isCancelled = false
}

/// The loop thread's half of an ``RPCClient``: the loop, the connection and the command inbox.
final class LoopSide {
    let loop: EventLoop
    let connection: ClientConnection
    let commands: Waker<RPCClient.Command>
    let stopped: DispatchSemaphore

    private init(
        loop: EventLoop,
        connection: ClientConnection,
        commands: Waker<RPCClient.Command>,
        stopped: DispatchSemaphore
    ) {
        self.loop = loop
        self.connection = connection
        self.commands = commands
        self.stopped = stopped
    }

    /// The body of the client's thread: connect, report, run until shut down, close the loop.
    static func run(
        endpoint: Endpoint,
        configuration: ClientConnection.Configuration,
        connected: @escaping (Result<RPCClient, RPCError>) -> Void
    ) {
        let loop: EventLoop
        do {
            loop = try EventLoop()
        } catch {
            connected(.failure(RPCError(code: .internal, message: "cannot create an event loop: \(error)")))
            return
        }
        var side: LoopSide?
        do {
            try ClientConnection.connect(to: endpoint, on: loop, configuration: configuration) { result in
                switch result {
                case .failure(let error):
                    connected(.failure(error))
                case .success(let connection):
                    do {
                        let commands = try Waker<RPCClient.Command>(loop: loop) { batch in
                            guard let side else { return }
                            // Every call started by this batch leaves in one write.
                            side.connection.batch {
                                for command in batch { command(side) }
                            }
                        }
                        let made = LoopSide(
                            loop: loop,
                            connection: connection,
                            commands: commands,
                            stopped: DispatchSemaphore(value: 0)
                        )
                        side = made
                        connection.onClose = { [unowned made] _ in made.commands.close() }
                        connected(.success(RPCClient.make(side: made)))
                    } catch {
                        connection.close()
                        connected(.failure(RPCError(code: .internal, message: "cannot create a waker: \(error)")))
                    }
                }
            }
        } catch {
            connected(.failure(RPCError(code: .invalidArgument, message: "cannot connect to \(endpoint): \(error)")))
        }
        loop.run()
        try? loop.close()
        side?.stopped.signal()
    }

    func shutDown() {
        connection.close()
        commands.close()
    }
}

extension RPCError {
    static let cancelledByCaller = RPCError(code: .cancelled, message: "cancelled by the caller")
    /// The call was not sent: the client's connection had closed (or the client was closed). It had
    /// no effect, so it may go again on a new connection.
    public static let clientClosed = RPCError(
        code: .unavailable,
        message: "not sent: the connection had closed",
        isRetryable: true
    )
    /// The call was not sent: its connection had used every stream id (2^32 − 1 calls; ids never
    /// repeat on a connection). It may go again on a new connection.
    public static let streamIDsExhausted = RPCError(
        code: .unavailable,
        message: "the connection has used every stream id: calls continue on a new connection",
        isRetryable: true
    )
}
