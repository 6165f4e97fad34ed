import Logging
import UV
import Wire

/// One client connection on the server: decodes frames, runs them through the
/// ``ConnectionStateMachine``, performs its actions, and owns the calls in flight. Loop thread only.
///
/// Output: frames are appended to `outbound` and written when the event that produced them ends: a
/// tick, a ``batch(_:)``, or the server's ``RPCServer/batchingOutput(_:)`` (a commit's
/// acknowledgements and events); what a read produces, on its own connection or another, leaves in
/// one write per connection just before the loop polls again, with the output of every other read
/// in the same iteration. Output produced outside any of these (a timer, a late answer) is written
/// at once.
///
/// Memory: the connection stops reading while its unsent bytes are above the high watermark (the
/// peer must read its replies before it may send more), and streaming calls see ``isWritable`` turn
/// false; bytes beyond the UV layer's hard cap close the connection.
final class ServerConnection: ServedConnection, ConnectionDelegate {
    /// Strong: the server keeps the connection in its table until it closes, which breaks the cycle;
    /// an `unowned` reference cost a checked retain on every access in profiles.
    let server: RPCServer
    let connection: Connection
    let id: Int
    /// The protocol's state, and the open calls by stream id.
    var machine: ConnectionStateMachine<ServerCall>
    private(set) var decoder: FrameDecoder
    var outbound: [UInt8] = []
    /// Undecoded input, and the metadata of open calls, last counted in the server's ``BufferBudget``.
    var countedInputByteCount = 0
    var countedMetadataByteCount = 0
    var waitingForWritability: [StreamID: ServerCall] = [:]
    /// Calls started by the read in progress; those whose request is not in the same read get a
    /// timer (``limitWaitForRequests(now:)``).
    private var awaitingRequest: [StreamID] = []
    private var principal: (any Principal)?
    /// The call that ended last, for the next call to reuse if nothing else holds it by then: a
    /// call answered in the read that started it is reused by the read's next call.
    private var endedCall: ServerCall?
    /// Calls that ended before it, kept too, up to ``reusableCallLimit`` in all: a commit or an
    /// accessory's answer ends a whole batch of this connection's calls at once, away from the
    /// reads that start new ones (keeping only the last, every other durable write freed its call
    /// and the next read allocated one again).
    private var earlierEndedCalls: [ServerCall] = []
    static let reusableCallLimit = 16
    /// The method of the decoder's last CALL_START, looked up when the decoder's count of method
    /// changes moved: clients tend to call one method many times in a row, and comparing a number
    /// costs less than comparing (or even retaining) the name.
    private var lastMethodChanges = UInt64.max
    private var lastMethod: MethodRegistry.Method?
    /// When the read in progress was taken up: the start of every call it carries, so a read of
    /// many calls costs one clock read for their starts.
    private var readStartedAt: UInt64 = 0
    /// Whether a read is being handled, and the calls of one method and status that ended during
    /// it: they are recorded with one clock read once the read is done, or when a call of another
    /// method or status ends (their answers leave together, at the flush that follows). A clock
    /// read per call was 3% of a pipelined call's time.
    private var isHandlingRead = false
    private var endedDuringRead = (methodIndex: 0, code: StatusCode.ok, calls: UInt64(0))
    /// Nesting depth of ``batch(_:)``; output is written when it returns to zero.
    private var batchDepth = 0
    /// Output waits for the server's batch (the connection is in its flush list).
    private var isOutputHeld = false
    private var isReadingPaused = false
    /// Set when the machine said close: the reason, and when, to force the close if the peer never
    /// reads the farewell.
    var closing: (reason: CloseReason, since: UInt64)?

    init(server: RPCServer, connection: Connection, id: Int) {
        self.server = server
        self.connection = connection
        self.id = id
        let configuration = server.configuration
        machine = ConnectionStateMachine(configuration: configuration.connection, now: connection.loop.now)
        decoder = FrameDecoder(maxFrameSize: configuration.maxFrameSize, expectsPreface: true)
        connection.pendingWriteTally = server.buffers.tally
        fitOutputCeilingToPeerFrames()
    }

    var peerMaxFrameSize: Int { machine.peerSettings.maxFrameSize }
    /// An answer is one frame.
    var peerMaxMessageSize: Int { peerMaxFrameSize }
    var openCallCount: Int { machine.openStreamCount }

    /// Our protocol grants each stream credit (checked by the call itself); the rest is the
    /// connection's room.
    func canSend(on call: ServerCall) -> Bool { isWritable }

    // MARK: ConnectionDelegate

    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        readStartedAt = EventLoop.monotonicNanoseconds
        isHandlingRead = true
        decoder.append(bytes)
        let now = connection.loop.now
        machine.bytesReceived(now: now)
        holdingOutputUntilPolling {
            do throws(WireError) {
                while !machine.isClosed {
                    // A call's two frames go straight to the call; the rest through a Frame.
                    if machine.isServingCalls, let header = try decoder.nextCompleteHeader() {
                        switch header.type {
                        case .callStart:
                            callStartReceived(header.streamID, try decoder.takeCallOptions(header), now: now)
                            continue
                        case .message:
                            messageReceived(header, now: now)
                            continue
                        default:
                            break
                        }
                    }
                    guard let frame = try decoder.nextFrame() else { break }
                    perform(machine.frameReceived(frame, now: now))
                    if case .settings = frame { fitOutputCeilingToPeerFrames() }
                }
            } catch {
                perform(machine.decodingFailed(error))
            }
        }
        isHandlingRead = false
        if endedDuringRead.calls > 0 { recordCallsEndedDuringRead() }
        // The handlers are done with the requests in the buffer.
        decoder.releaseConsumedBytes()
        // Usually every frame was whole and the buffer is empty again: nothing to count.
        if decoder.bufferedByteCount != countedInputByteCount { countInputHeld() }
        if !awaitingRequest.isEmpty { limitWaitForRequests(now: now) }
        if !isWritable && closing == nil {
            // Backpressure: let the peer's replies drain before reading more of its requests.
            connection.stopReading()
            isReadingPaused = true
        }
    }

    func connectionDidReachEndOfInput(_ connection: Connection) {
        server.teardowns.add(self)
    }

    func connectionDidFlushWrites(_ connection: Connection) {
        resumeIfWritable()
    }

    func connectionDidClose(_ connection: Connection, error: UVError?) {
        server.buffers.tally.byteCount -= countedInputByteCount
        cancelAllCalls()
        server.connectionDidClose(self, reason: closing?.reason ?? .peerClosed, error: error)
    }

    // MARK: Actions

    func perform(_ action: ConnectionStateMachine<ServerCall>.Action) {
        switch action {
        case .none:
            break
        case .sendHandshake:
            FrameEncoder.encode(.preface(Preface()), into: &outbound)
            FrameEncoder.encode(.settings(server.configuration.announcedSettings), into: &outbound)
        case .send(let frame):
            FrameEncoder.encode(frame, into: &outbound)
        case .startCall(let streamID, let start):
            // Not the hot path (a CALL_START goes to callStartReceived): no cache.
            startCall(streamID, server.registry.method(named: start.method), named: start.method, start.options)
        case .refuseCall(let streamID, let status):
            encodeCallEnd(streamID, status)
            recordRefusal(streamID, status)
        case .deliverMessage(let streamID, let payload, let endStream):
            if let call = machine.call(on: streamID) { deliver(payload[...], endStream: endStream, to: call) }
        case .cancelCall(let streamID):
            let (call, next) = machine.endCall(streamID, now: connection.loop.now)
            if let call {
                finishBookkeeping(for: call, code: .cancelled, then: next)
                call.cancel()
            }
        case .addCredit(let streamID, let increment):
            if let call = machine.call(on: streamID) {
                call.creditGranted(increment)
                if isWritable { call.becameWritable() }
            }
        case .close(let reason, let farewell):
            for frame in farewell { FrameEncoder.encode(frame, into: &outbound) }
            beginClose(reason)
        }
    }

    private func callStartReceived(_ streamID: StreamID, _ options: CallStartOptions, now: UInt64) {
        switch machine.callStartReceived(streamID, now: now) {
        case .admitted: startCall(streamID, lookUpDecodedMethod(), named: nil, options)
        case .refused(let status): perform(.refuseCall(streamID, status))
        case .violation(let close): perform(close)
        }
    }

    private func messageReceived(_ header: FrameHeader, now: UInt64) {
        switch machine.streamFrameReceived(on: header.streamID, kind: .message, now: now) {
        case .open(let call):
            let payload = decoder.takeMessagePayload(header)
            deliver(payload, endStream: header.flags.contains(.endStream), to: call)
        case .ignored:
            decoder.skipFrame(header)
        case .violation(let close):
            decoder.skipFrame(header)
            perform(close)
        }
    }

    /// Opens an admitted call of `method` (`nil`: no method has the name the client sent, which is
    /// `name`, or the decoder's last method when `name` is `nil`: no string is passed on the hot path).
    private func startCall(
        _ streamID: StreamID,
        _ method: MethodRegistry.Method?,
        named name: String?,
        _ options: CallStartOptions
    ) {
        // Tested, not bound: `guard let` copied (retained) the method for the rest of the call.
        guard method != nil else {
            let message = "unknown method \(name ?? decoder.lastMethod)"
            refuse(streamID, CallStatus(code: .unimplemented, message: message))
            return
        }
        guard method!.kind != .bidirectionalStreaming else {
            let message = "\(method!.name) takes a stream of requests: call it on the gRPC door"
            refuse(streamID, CallStatus(code: .unimplemented, message: message))
            return
        }
        guard !options.exceedsMetadataLimit else {
            let message =
                "metadata larger than \(WireLimits.maxMetadataSize) bytes (each entry counts its key, its value and "
                + "\(WireLimits.metadataEntryOverhead) bytes)"
            refuse(streamID, CallStatus(code: .resourceExhausted, message: message))
            return
        }
        if server.authenticator != nil, principal == nil, server.requiresAuthentication[method!.index] {
            switch server.authenticate(token: options.metadata.bearerToken, on: connection) {
            case .accepted(let authenticated): principal = authenticated
            case .refused(let status): return refuse(streamID, status)
            }
        }
        let now = connection.loop.now
        let deadline = options.timeoutMilliseconds == 0 ? nil : now + UInt64(options.timeoutMilliseconds)
        let credit = machine.peerSettings.initialStreamCredit
        let call: ServerCall
        if let ended = takeEndedCall() {
            // Reopened before it moves into `call`: reopened through `call`, it was retained around it.
            ended.reopen(
                streamID: streamID,
                method: method!,
                metadata: options.metadata,
                deadline: deadline,
                startedAt: readStartedAt,
                credit: credit,
                connection: self
            )
            // A connection authenticates once, so a reused call has this principal or none; passing
            // it on every reuse retained and released it.
            if !ended.hasPrincipal, let principal { ended.adopt(principal) }
            call = consume ended
        } else {
            call = ServerCall(
                streamID: streamID,
                method: method!,
                metadata: options.metadata,
                principal: principal,
                deadline: deadline,
                startedAt: readStartedAt,
                credit: credit,
                connection: self
            )
        }
        if !options.metadata.isEmpty { countMetadata(options.metadataSize, of: call) }
        machine.callOpened(consume call, on: streamID)
        awaitingRequest.append(streamID)
    }

    /// An ended call to reuse, the latest first, if nothing else holds it any more (one still held
    /// is let go).
    private func takeEndedCall() -> ServerCall? {
        if isKnownUniquelyReferenced(&endedCall), let ended = endedCall.take() { return ended }
        endedCall = nil
        guard !earlierEndedCalls.isEmpty else { return nil }
        let last = earlierEndedCalls.count - 1
        guard isKnownUniquelyReferenced(&earlierEndedCalls[last]) else {
            earlierEndedCalls.removeLast()
            return nil
        }
        return earlierEndedCalls.removeLast()
    }

    /// The deadline runs from reading CALL_START, and no call waits for its request longer than
    /// the request timeout: a timer for each call started by this read whose request has not come.
    private func limitWaitForRequests(now: UInt64) {
        let limit = now + server.configuration.requestTimeoutMilliseconds
        for streamID in awaitingRequest {
            guard let call = machine.call(on: streamID), call.isAwaitingRequest, !call.hasEnded else { continue }
            let expiry = min(call.deadline ?? limit, limit)
            let reason: CallTimers.Reason =
                expiry == call.deadline
                ? .deadlineBeforeRequest
                : .requestTimeout(milliseconds: server.configuration.requestTimeoutMilliseconds)
            server.callTimers.add(call, at: expiry, reason)
        }
        awaitingRequest.removeAll(keepingCapacity: true)
    }

    /// The method of the CALL_START just decoded (see ``lastMethodChanges``).
    private func lookUpDecodedMethod() -> MethodRegistry.Method? {
        if decoder.methodChanges != lastMethodChanges {
            lastMethodChanges = decoder.methodChanges
            lastMethod = server.registry.method(named: decoder.lastMethod)
        }
        return lastMethod
    }

    private func deliver(_ payload: ArraySlice<UInt8>, endStream: Bool, to call: ServerCall) {
        let streamID = call.streamID
        // The handler runs once, on the one request message; a second message fails.
        guard call.isAwaitingRequest else {
            call.fail(CallStatus(code: .invalidArgument, message: "the request must be exactly one message"))
            return
        }
        call.isAwaitingRequest = false
        // A request that follows its CALL_START in the same read needs no timer: drop it from the
        // read's list at once (usually its last entry), so the list is seldom walked.
        if awaitingRequest.last == streamID { awaitingRequest.removeLast() }
        guard endStream else {
            call.fail(CallStatus(code: .invalidArgument, message: "the request message must carry END_STREAM"))
            return
        }
        // A timer that waited for the request is done; the deadline (if any) takes over.
        if call.timerSlot >= 0 { server.callTimers.remove(call) }
        call.registered.handler(call, payload)
        if !call.hasEnded, let deadline = call.deadline {
            server.callTimers.add(call, at: deadline, .deadline)
        }
    }

    /// Ends `call`, whose pending expiry passed (``CallTimers``), with DEADLINE_EXCEEDED.
    func timerExpired(for call: ServerCall) {
        guard !call.hasEnded else { return }
        let status = CallStatus(code: .deadlineExceeded, message: call.timerReason.message)
        encodeCallEnd(call.streamID, status)
        let next = machine.endCall(call.streamID, now: connection.loop.now).next
        finishBookkeeping(for: call, code: status.code, then: next)
        call.cancel()
        scheduleFlush()
    }

    private func refuse(_ streamID: StreamID, _ status: CallStatus) {
        encodeCallEnd(streamID, status)
        recordRefusal(streamID, status)
        perform(machine.endCall(streamID, now: connection.loop.now).next)
    }

    // MARK: Called by ServerCall

    func sendMessage(_ message: [UInt8], on streamID: StreamID) {
        FrameEncoder.encodeMessage(streamID: streamID, payload: message, endStream: false, into: &outbound)
        scheduleFlush()
    }

    func callEnded(_ call: ServerCall, status: CallStatus) {
        let (open, next) = machine.endCall(call.streamID, now: connection.loop.now)
        guard open != nil else { return }
        encodeCallEnd(call.streamID, status)
        finishBookkeeping(for: (consume open)!, code: status.code, message: status.message, then: next)
        scheduleFlush()
    }

    /// Ends a unary call with its response of exactly `length` bytes, which `write` writes in
    /// place, and status OK: the MESSAGE and the CALL_END in one append.
    func callAnswered(_ call: ServerCall, length: Int, writingWith write: (inout OutputSpan<UInt8>) -> Void) {
        let (open, next) = machine.endCall(call.streamID, now: connection.loop.now)
        guard open != nil else { return }
        FrameEncoder.encodeUnaryAnswer(
            streamID: call.streamID,
            responseLength: length,
            into: &outbound,
            writingWith: write
        )
        finishBookkeeping(for: (consume open)!, code: .ok, then: next)
        scheduleFlush()
    }

    /// Ends a unary call with `response` and status OK: the MESSAGE and the CALL_END in one append.
    func callAnswered(_ call: ServerCall, response: [UInt8]) {
        let (open, next) = machine.endCall(call.streamID, now: connection.loop.now)
        guard open != nil else { return }
        FrameEncoder.encodeUnaryAnswer(streamID: call.streamID, response: response, into: &outbound)
        finishBookkeeping(for: (consume open)!, code: .ok, then: next)
        scheduleFlush()
    }

    func callIsWaitingForWritability(_ call: ServerCall) {
        waitingForWritability[call.streamID] = call
    }

    /// Log line, metrics and deadline timer for a call that just ended (``ConnectionStateMachine/endCall(_:now:)``),
    /// then what the machine said to do next. Takes the call that the machine gave back, to keep for
    /// reuse: moved in, not copied (a copy retained it, and the machine's reference was released).
    private func finishBookkeeping(
        for call: consuming ServerCall,
        code: StatusCode,
        message: String = "",
        then next: ConnectionStateMachine<ServerCall>.Action
    ) {
        if server.logsEveryCall || Self.isServerFault(code) { logEnd(of: call, code, message) }
        if call.countedMetadataBytes > 0 { uncountMetadata(of: call) }
        if let earlier = endedCall.take(), earlierEndedCalls.count < Self.reusableCallLimit - 1 {
            earlier.forgetMetadata()
            // Moved in: appending a copy retained it and released the binding.
            earlierEndedCalls.append(consume earlier)
        }
        let streamID = call.streamID
        if call.timerSlot >= 0 { server.callTimers.remove(call) }
        if isHandlingRead && call.startedAt == readStartedAt {
            if endedDuringRead.methodIndex != call.methodIndex || endedDuringRead.code != code {
                if endedDuringRead.calls > 0 { recordCallsEndedDuringRead() }
                endedDuringRead.methodIndex = call.methodIndex
                endedDuringRead.code = code
            }
            endedDuringRead.calls += 1
        } else {
            server.recordCallEnd(methodIndex: call.methodIndex, code: code, startedAt: call.startedAt)
        }
        endedCall = consume call
        // Most calls never wait: skip hashing into an empty table.
        if !waitingForWritability.isEmpty { waitingForWritability.removeValue(forKey: streamID) }
        perform(next)
    }

    private func recordCallsEndedDuringRead() {
        server.metrics.recordCalls(
            methodIndex: endedDuringRead.methodIndex,
            code: endedDuringRead.code,
            nanoseconds: EventLoop.monotonicNanoseconds &- readStartedAt,
            calls: endedDuringRead.calls
        )
        endedDuringRead.calls = 0
    }

    // MARK: Output

    /// Every CALL_END goes through here: it must fit the peer's frame limit, and its message may
    /// quote client input.
    private func encodeCallEnd(_ streamID: StreamID, _ status: CallStatus) {
        FrameEncoder.encodeCallEnd(
            streamID: streamID,
            status: status.fitted(toFrameSize: peerMaxFrameSize),
            into: &outbound
        )
    }

    /// Runs `body` and writes everything it produced in one write at the end.
    func batch(_ body: () -> Void) {
        batchDepth += 1
        body()
        batchDepth -= 1
        if batchDepth == 0 { flush() }
    }

    /// Runs `body` (a read) and holds what it produced until the loop has read every connection
    /// that was ready: the replies to all of them then leave together (``OutputBeforePolling``).
    private func holdingOutputUntilPolling(_ body: () -> Void) {
        batchDepth += 1
        server.outputBeforePolling.reading(body)
        batchDepth -= 1
        guard batchDepth == 0, !outbound.isEmpty, !isOutputHeld else { return }
        isOutputHeld = true
        server.outputBeforePolling.hold(self)
    }

    /// Writes now unless a batch is open (which writes when it ends): this connection's own, or the
    /// server's (``RPCServer/batchingOutput(_:)``).
    private func scheduleFlush() {
        guard batchDepth == 0, !isOutputHeld else { return }
        if server.outputBeforePolling.isReading {
            // Another connection's read produced this: it leaves with that read's replies.
            isOutputHeld = true
            server.outputBeforePolling.hold(self)
        } else if server.holdOutput(of: self) {
            isOutputHeld = true
        } else {
            flush()
        }
    }

    /// The server's output batch ended.
    func flushHeldOutput() {
        isOutputHeld = false
        flush()
    }

    private func flush() {
        guard !outbound.isEmpty, connection.state == .open else { return }
        do {
            try connection.write(outbound)
        } catch {
            outbound.removeAll()
            if error == .noBufferSpace {
                beginClose(.outboundBufferFull)
                connection.close()
            }
            return
        }
        outbound.removeAll(keepingCapacity: outbound.capacity <= 64 * 1024)
        // Only output the kernel did not take at once is held (and counted by the UV layer).
        if connection.pendingWriteByteCount > 0 { server.buffers.check(server) }
        resumeIfWritable()
    }

    private func resumeIfWritable() {
        guard isWritable else { return }
        if isReadingPaused {
            isReadingPaused = false
            try? connection.startReading()
        }
        guard !waitingForWritability.isEmpty else { return }
        let waiting = waitingForWritability
        waitingForWritability = [:]
        for call in waiting.values { call.becameWritable() }
    }
}
