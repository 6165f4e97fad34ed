import TLS
import UV
public import Wire

/// One call in progress on the server, handed to its handler. Loop thread only.
///
/// A unary call ends with ``respond(_:)`` or ``fail(_:)``. A server-streaming call sends with
/// ``send(_:)`` while ``isWritable`` (credit from the client and room in the connection's outbound
/// buffer) and ends with ``finish(_:)``; when it is not writable it waits for ``onWritable`` and
/// decides itself whether to coalesce, drop or wait, so nothing queues without bound.
///
/// Once the call has ended, was cancelled or its deadline passed, further answers are ignored.
///
/// The connection reuses an ended call object for a later call when nothing else holds it (which
/// saves an allocation and a deallocation per call), so hold a call strongly while you use it: a
/// `weak` or `unowned` reference may later see another call.
public final class ServerCall {
    public private(set) var streamID: StreamID
    /// The connection the call came on, unique while the server runs: handlers that bind state to
    /// a connection (an accessory's link) compare it.
    public let connectionID: Int
    /// The registered method: one reference for its name, kind, metrics index and handler.
    private(set) var registered: MethodRegistry.Method
    public var method: String { registered.name }
    /// The method's position in the registry, for metrics.
    var methodIndex: Int { registered.index }
    public var kind: MethodRegistry.Kind { registered.kind }
    public private(set) var metadata: [MetadataEntry]
    /// Who the connection authenticated as; `nil` when the server requires no authentication.
    public private(set) var principal: (any Principal)?
    /// The subject of the client certificate the connection's TLS verified (mutual TLS), if any.
    public var clientCertificateSubject: String? {
        (connection?.connection.security as? TLSSession)?.peerSubject
    }
    /// Whether ``principal`` is set: asking the optional existential itself copies (retains) it.
    private(set) var hasPrincipal: Bool
    /// When the call must have ended, in the loop's milliseconds; `nil` for none.
    public private(set) var deadline: UInt64?
    /// ``EventLoop/monotonicNanoseconds`` when the read carrying its CALL_START was taken up.
    public private(set) var startedAt: UInt64
    /// Runs once if the call is cancelled: by the client, by its deadline, or by the connection closing.
    public var onCancel: (() -> Void)?
    /// Runs when a streaming call that was not writable becomes writable again.
    public var onWritable: (() -> Void)?
    /// Runs when the client of a bidirectional call has sent its last request; unset, the call then
    /// ends with OK.
    public var onRequestsEnded: (() -> Void)?

    public private(set) var hasEnded = false
    public private(set) var isCancelled = false
    /// Messages the client still allows on this stream.
    public private(set) var credit: UInt32
    /// Strong: the connection holds the call in its table until the call ends, so the cycle is
    /// broken exactly when the call ends. (A weak reference cost a side table per call.)
    var connection: (any ServedConnection)?
    /// Whether the request message has yet to arrive (the handler runs once, when it does).
    var isAwaitingRequest = true
    /// Bytes of this call's metadata counted in the server's ``BufferBudget`` while it is open.
    var countedMetadataBytes = 0
    /// The call's place in the server's ``CallTimers`` (-1: no pending expiry), when it expires (in
    /// the loop's milliseconds) and why.
    var timerSlot = -1
    var timerExpiry: UInt64 = 0
    var timerReason = CallTimers.Reason.deadline

    init(
        streamID: StreamID,
        method: MethodRegistry.Method,
        metadata: [MetadataEntry],
        principal: (any Principal)?,
        deadline: UInt64?,
        startedAt: UInt64,
        credit: UInt32,
        connection: any ServedConnection
    ) {
        self.streamID = streamID
        self.registered = method
        self.metadata = metadata
        self.principal = principal
        hasPrincipal = principal != nil
        self.deadline = deadline
        self.startedAt = startedAt
        self.connectionID = connection.id
        self.credit = credit
        self.connection = connection
    }

    /// Makes this ended call, which only its connection holds, the call the arguments describe
    /// (those of ``init(streamID:method:metadata:principal:deadline:startedAt:credit:connection:)``
    /// but the principal, which stays: see ``adopt(_:)``). A reference that does not change (the
    /// method, empty metadata: the usual case on a connection) is not stored again, which saves its
    /// retain and release. Both take the call's parts one by one: gathered into one struct first,
    /// each reference was retained once more, 110–170 instructions a call under callgrind.
    func reopen(
        streamID: StreamID,
        method: MethodRegistry.Method,
        metadata: [MetadataEntry],
        deadline: UInt64?,
        startedAt: UInt64,
        credit: UInt32,
        connection: any ServedConnection
    ) {
        precondition(hasEnded && self.connection == nil && connectionID == connection.id, "reopened a live call")
        self.streamID = streamID
        if registered !== method { registered = method }
        if !(metadata.isEmpty && self.metadata.isEmpty) { self.metadata = metadata }
        self.deadline = deadline
        self.startedAt = startedAt
        self.credit = credit
        self.connection = connection
        hasEnded = false
        isCancelled = false
        isAwaitingRequest = true
    }

    /// Lets go of an ended call's metadata while it waits to be reused (the connection keeps a few).
    func forgetMetadata() {
        if !metadata.isEmpty { metadata = [] }
    }

    /// Gives a reopened call the principal its connection authenticated as since the call was
    /// first made (a connection authenticates once: a call it reuses has that principal or none).
    func adopt(_ principal: any Principal) {
        precondition(!hasPrincipal, "a call's principal is set once")
        self.principal = principal
        hasPrincipal = true
    }

    /// The `trace-id` metadata value, if the client sent one.
    public var traceID: String? {
        metadata.first { $0.key == "trace-id" }.map { String(decoding: $0.value, as: UTF8.self) }
    }

    /// Answers a unary call with `response` and status OK.
    public func respond(_ response: [UInt8]) {
        guard !hasEnded else { return }
        precondition(kind == .unary, "respond(_:) is for unary calls; use send(_:) and finish(_:)")
        if response.count > Self.alwaysFits, let refusal = refusal(ofAnswerOf: response.count) {
            fail(refusal)
            return
        }
        guard let connection = markEnded() else { return }
        connection.callAnswered(self, response: response)
    }

    /// Answers a unary call with status OK and a response of exactly `length` bytes that `write`
    /// writes in place into the connection's outgoing bytes: no array of its own to allocate, copy
    /// and free, which for a small response (a cached read's is about 20 bytes) cost more than
    /// writing it.
    public func respond(length: Int, writingWith write: (inout OutputSpan<UInt8>) -> Void) {
        guard !hasEnded else { return }
        precondition(kind == .unary, "respond(length:writingWith:) is for unary calls")
        if length > Self.alwaysFits, let refusal = refusal(ofAnswerOf: length) {
            fail(refusal)
            return
        }
        guard let connection = markEnded() else { return }
        connection.callAnswered(self, length: length, writingWith: write)
    }

    /// Ends the call with `status` (an error, for a unary call).
    public func fail(_ status: CallStatus) {
        end(with: status)
    }

    /// Whether ``send(_:)`` would send now.
    public var isWritable: Bool {
        guard !hasEnded, let connection else { return false }
        return credit > 0 && connection.canSend(on: self)
    }

    /// Sends one message of a streaming call if the client's credit and the outbound buffer allow.
    /// - Returns: `false` if nothing was sent; ``onWritable`` runs when sending may succeed again.
    @discardableResult
    public func send(_ message: [UInt8]) -> Bool {
        precondition(kind != .unary, "send(_:) is for streaming calls; use respond(_:)")
        guard isWritable, let connection else {
            if !hasEnded { connection?.callIsWaitingForWritability(self) }
            return false
        }
        guard message.count <= connection.peerMaxMessageSize else {
            finish(Self.tooLarge(message.count, limit: connection.peerMaxMessageSize))
            return false
        }
        credit -= 1
        connection.sendMessage(message, on: streamID)
        return true
    }

    /// Asks for ``onWritable`` once the call may send again, when ``isWritable`` is false now (a
    /// sender that checks before it builds a message, instead of trying ``send(_:)``).
    public func notifyWhenWritable() {
        guard !hasEnded, !isWritable, let connection else { return }
        connection.callIsWaitingForWritability(self)
    }

    /// Ends a streaming call.
    public func finish(_ status: CallStatus = .ok) {
        end(with: status)
    }

    private func end(with status: CallStatus) {
        guard !hasEnded, let connection = markEnded() else { return }
        connection.callEnded(self, status: status)
    }

    /// The call has ended: nothing more is sent for it, and its callbacks are let go.
    /// - Returns: its connection, moved out of the call (taking a copy and then clearing the
    ///   property cost a retain and a release on every call's answer).
    private func markEnded() -> (any ServedConnection)? {
        hasEnded = true
        onWritable = nil
        onCancel = nil
        if onRequestsEnded != nil { onRequestsEnded = nil }
        return connection.take()
    }

    /// The client granted more messages.
    func creditGranted(_ increment: UInt32) {
        let (sum, overflow) = credit.addingReportingOverflow(increment)
        credit = overflow ? .max : sum
    }

    /// Stops the call without sending anything more for it (the caller sends what is due).
    func cancel() {
        guard !hasEnded else { return }
        hasEnded = true
        isCancelled = true
        connection = nil
        onWritable = nil
        onRequestsEnded = nil
        let onCancel = self.onCancel
        self.onCancel = nil
        onCancel?()
    }

    func becameWritable() {
        guard !hasEnded, isWritable else { return }
        onWritable?()
    }

    /// Answers up to this size fit any peer's frames (the smallest MAX_FRAME_SIZE a peer may announce,
    /// ``WireLimits/minimumMaxFrameSize``) and cannot fill a connection's unsent output: the common
    /// case skips ``refusal(ofAnswerOf:)`` with one comparison to a constant of this module.
    private static let alwaysFits = 1 << 14

    /// Why an answer of `size` bytes cannot go, if it cannot: it is larger than the client's frames,
    /// the connection's unsent output has no room for it (a client that asked for more large answers
    /// than it read: this call fails, the connection goes on), or the server's buffers for all its
    /// connections have none.
    private func refusal(ofAnswerOf size: Int) -> CallStatus? {
        guard let connection else { return nil }
        if size > connection.peerMaxMessageSize { return Self.tooLarge(size, limit: connection.peerMaxMessageSize) }
        guard connection.hasRoom(forAnswerOf: size) else {
            return CallStatus(
                code: .resourceExhausted,
                message: "response of \(size) bytes does not fit the connection's unsent output "
                    + "(\(connection.unsentByteCount) bytes wait): read the answers before asking for more"
            )
        }
        let buffers = connection.server.buffers
        guard buffers.hasRoom(forAnswerOf: size) else {
            return CallStatus(
                code: .resourceExhausted,
                message: "response of \(size) bytes does not fit the server's buffers "
                    + "(\(buffers.heldByteCount) of \(buffers.limit) bytes held for its connections): try again later"
            )
        }
        return nil
    }

    private static func tooLarge(_ size: Int, limit: Int) -> CallStatus {
        CallStatus(
            code: .resourceExhausted,
            message: "response of \(size) bytes exceeds the peer's max frame size \(limit)"
        )
    }
}
