import UV
import Wire

/// What the server and its calls need of a client connection, whichever protocol it speaks: ours
/// (``ServerConnection``) or gRPC over HTTP/2 (``GRPCConnection``). A ``ServerCall`` answers
/// through it, so a handler serves both doors without knowing which one a call came through.
/// Loop thread only.
protocol ServedConnection: AnyObject {
    var id: Int { get }
    var server: RPCServer { get }
    /// The socket.
    var connection: Connection { get }

    // MARK: For its calls

    /// Sends one message of a streaming call.
    func sendMessage(_ message: [UInt8], on streamID: StreamID)
    /// Ends `call` with `status`.
    func callEnded(_ call: ServerCall, status: CallStatus)
    /// Ends a unary call with `response` and status OK.
    func callAnswered(_ call: ServerCall, response: [UInt8])
    /// Ends a unary call with a response of exactly `length` bytes that `write` writes in place.
    func callAnswered(_ call: ServerCall, length: Int, writingWith write: (inout OutputSpan<UInt8>) -> Void)
    /// `call` waits for ``canSend(on:)``; the connection calls ``ServerCall/becameWritable()`` then.
    func callIsWaitingForWritability(_ call: ServerCall)
    /// Whether a message sent on `call` now goes without queueing past the connection's bounds.
    func canSend(on call: ServerCall) -> Bool
    /// `call`'s pending expiry (``CallTimers``) passed: end it with DEADLINE_EXCEEDED.
    func timerExpired(for call: ServerCall)
    /// The largest message the peer accepts.
    var peerMaxMessageSize: Int { get }
    /// Whether an answer of `size` bytes fits under the connection's ceiling of unsent output.
    func hasRoom(forAnswerOf size: Int) -> Bool
    /// Bytes of output not yet taken by the kernel.
    var unsentByteCount: Int { get }

    // MARK: For the server

    /// Bytes held for the peer (what the server's ``BufferBudget`` ranks connections by).
    var heldByteCount: Int { get }
    /// Calls started and not yet ended.
    var openCallCount: Int { get }
    /// Starts reading (from the server's admission queue).
    func admit()
    /// Closes after the peer closed its side (from the server's teardown queue).
    func tearDownAfterPeerClosed()
    /// Starts a graceful drain: no new calls, the open ones finish.
    func drain()
    /// Runs the connection's timeouts.
    func tick(now: UInt64)
    /// Closes at once: the server's buffers are over budget and this connection holds the most.
    func evict()
    /// The server's output batch ended: write what was held for it.
    func flushHeldOutput()
}
