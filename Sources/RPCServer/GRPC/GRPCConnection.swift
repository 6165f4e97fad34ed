import HTTP2
import Logging
import UV
import Wire

/// One client connection on the gRPC door: gRPC over HTTP/2 (cleartext, prior knowledge), read and
/// framed by ``HTTP2ServerSession``, carrying calls onto the same method table, handlers and limits
/// as our protocol. Loop thread only.
///
/// A stream is one call: its header block names the method (`:path`) and carries the metadata
/// (`authorization: Bearer`, `grpc-timeout`); its body is one length-prefixed request message. The
/// answer is the response's header block, the messages, and the status in trailers (a call that
/// fails before any message answers with trailers only). Cancellation is RST_STREAM; the drain is a
/// GOAWAY. Flow control is HTTP/2's: a stream's messages wait in the session until the client's
/// window takes them, and a streaming call is writable while few enough wait.
final class GRPCConnection: ServedConnection, ConnectionDelegate, HTTP2ServerSessionDelegate {
    let server: RPCServer
    let connection: Connection
    let id: Int
    /// Set right after init (the session's delegate is this connection).
    private var session: HTTP2ServerSession!
    private var outbound: [UInt8] = []
    /// Requests and their calls, by HTTP/2 stream id, until the stream closes.
    private var streams: [Int32: GRPCRequest] = [:]
    private var openCalls = 0
    private var waitingForWritability: [Int32: ServerCall] = [:]
    /// The request last begun or looked up in ``streams``, and its stream. A header block's fields
    /// come one callback each, all in a row (HTTP/2 lets no other frame in between), and a unary
    /// call's body, end and answer follow for the same stream, so most lookups end here: hashing
    /// the id took more than reading a field.
    private var lastRequest: (stream: Int32, request: GRPCRequest)?
    /// The principal of the last token a call carried (the `authorization` value as sent; `nil`: none,
    /// the connection's client certificate's): calls on a connection nearly always carry the same
    /// one, which is then resolved once (and a certificate's calls share one principal and session).
    private var lastAuthorization: (value: [UInt8]?, principal: any Principal)?
    /// The method of the last call's `:path`: calls on a connection tend to repeat one method, and
    /// comparing bytes costs less than making and hashing the name.
    private var lastPath: (path: [UInt8], method: MethodRegistry.Method?)?
    /// Request bodies held, as last counted in the server's ``BufferBudget``.
    private var countedBodyBytes = 0
    private var batchDepth = 0
    private var isOutputHeld = false
    private var isReadingPaused = false
    private var isDraining = false
    private var isReceiving = false
    private var lastActivity: UInt64
    private(set) var closing: (reason: CloseReason, since: UInt64)?

    /// Messages a streaming call may leave waiting for the client's flow-control window before it
    /// stops being writable.
    static let streamHighWatermark = 256 << 10
    /// The largest message a gRPC client accepts unless configured otherwise (grpc's default).
    static let clientMaxMessageSize = 4 << 20

    init(server: RPCServer, connection: Connection, id: Int) {
        self.server = server
        self.connection = connection
        self.id = id
        lastActivity = connection.loop.now
        connection.pendingWriteTally = server.buffers.tally
        connection.maxPendingWriteBytes = server.configuration.maxPendingWriteBytes + Self.clientMaxMessageSize
        let configuration = server.configuration
        session = HTTP2ServerSession(
            settings: .init(
                maxConcurrentStreams: UInt32(configuration.connection.maxConcurrentStreams),
                initialWindowSize: UInt32(min(configuration.maxFrameSize + 5, Int(Int32.max))),
                maxHeaderListSize: UInt32(GRPCRequest.maxHeaderBytes)
            ),
            delegate: self
        )
    }

    var peerMaxMessageSize: Int { Self.clientMaxMessageSize }
    var openCallCount: Int { openCalls }
    var unsentByteCount: Int { connection.pendingWriteByteCount + outbound.count + session.pendingByteCount }
    var heldByteCount: Int { unsentByteCount + countedBodyBytes }

    var isWritable: Bool {
        closing == nil && unsentByteCount < server.configuration.outboundHighWatermark
    }

    func hasRoom(forAnswerOf size: Int) -> Bool {
        unsentByteCount + size + (64 << 10) <= connection.maxPendingWriteBytes
    }

    func canSend(on call: ServerCall) -> Bool {
        isWritable && session.pendingByteCount(on: Int32(call.streamID.rawValue)) < Self.streamHighWatermark
    }

    // MARK: ConnectionDelegate

    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        lastActivity = connection.loop.now
        var failure: HTTP2Error?
        holdingOutputUntilPolling {
            isReceiving = true
            do throws(HTTP2Error) {
                try session.receive(bytes)
            } catch {
                failure = error
            }
            isReceiving = false
        }
        countBodiesHeld()
        if let failure {
            let reason = CloseReason.protocolViolation("HTTP/2: \(failure)")
            // A peer that does not speak HTTP/2 gets no answer; one that broke it, a GOAWAY saying how.
            if let code = failure.goAwayCode { session.terminate(errorCode: code) }
            beginClose(reason)
            return
        }
        if !isWritable && closing == nil {
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
        server.buffers.tally.byteCount -= countedBodyBytes
        countedBodyBytes = 0
        cancelAllCalls()
        server.connectionDidClose(self, reason: closing?.reason ?? .peerClosed, error: error)
    }

    // MARK: HTTP2ServerSessionDelegate

    func requestBegan(on streamID: Int32) {
        let request = GRPCRequest()
        streams[streamID] = request
        lastRequest = (streamID, request)
    }

    func requestHeader(name: Span<UInt8>, value: Span<UInt8>, on streamID: Int32) {
        request(of: streamID)?.read(name: name, value: value)
    }

    /// `streams[streamID]`, from ``lastRequest`` when it is that stream's.
    private func request(of streamID: Int32) -> GRPCRequest? {
        if let lastRequest, lastRequest.stream == streamID { return lastRequest.request }
        guard let request = streams[streamID] else { return nil }
        lastRequest = (streamID, request)
        return request
    }

    /// The registered method `path` names, if any.
    private func method(at path: [UInt8]) -> MethodRegistry.Method? {
        if let lastPath, lastPath.path == path { return lastPath.method }
        let method = server.registry.method(named: String(decoding: path, as: UTF8.self))
        lastPath = (path, method)
        return method
    }

    func requestHeadersEnded(on streamID: Int32, endStream: Bool) {
        guard let request = request(of: streamID) else { return }
        if let fault = request.fault {
            answer(streamID, fault)
            return
        }
        guard let method = method(at: request.path) else {
            let name = String(decoding: request.path.prefix(CallStatus.maxServerMessageBytes), as: UTF8.self)
            answer(streamID, .grpc(CallStatus(code: .unimplemented, message: "unknown method \(name)")))
            return
        }
        if server.isShuttingDown {
            let status = CallStatus(code: .unavailable, message: "the server is shutting down", isRetryable: true)
            answer(streamID, .grpc(status))
            return
        }
        var principal: (any Principal)?
        if server.authenticator != nil, server.requiresAuthentication[method.index] {
            switch authenticate(request.authorization) {
            case .accepted(let authenticated): principal = authenticated
            case .refused(let status):
                answer(streamID, .grpc(status))
                return
            }
        }
        let now = connection.loop.now
        let call = ServerCall(
            streamID: StreamID(rawValue: UInt32(streamID)),
            method: method,
            metadata: request.metadata,
            principal: principal,
            deadline: request.timeoutMilliseconds.map { now + $0 },
            startedAt: EventLoop.monotonicNanoseconds,
            credit: .max,
            connection: self
        )
        request.call = call
        request.metadata = []
        openCalls += 1
        if endStream {
            requestEnded(on: streamID)
            return
        }
        // A bidirectional call may wait for its next request as long as its deadline allows.
        if method.kind == .bidirectionalStreaming {
            if let deadline = call.deadline { server.callTimers.add(call, at: deadline, .deadline) }
            return
        }
        let limit = now + server.configuration.requestTimeoutMilliseconds
        let expiry = min(call.deadline ?? limit, limit)
        let reason: CallTimers.Reason =
            expiry == call.deadline
            ? .deadlineBeforeRequest : .requestTimeout(milliseconds: server.configuration.requestTimeoutMilliseconds)
        server.callTimers.add(call, at: expiry, reason)
    }

    func requestData(_ bytes: Span<UInt8>, on streamID: Int32) {
        guard let request = request(of: streamID), let call = request.call, call.isAwaitingRequest, !call.hasEnded
        else {
            return
        }
        guard request.body.count + bytes.count <= server.configuration.maxFrameSize + 5 else {
            call.isAwaitingRequest = false
            let message = "request message larger than \(server.configuration.maxFrameSize) bytes"
            call.fail(CallStatus(code: .resourceExhausted, message: message))
            request.body = []
            return
        }
        Self.append(bytes, to: &request.body)
        if call.kind == .bidirectionalStreaming { deliverWholeRequests(of: request, to: call) }
    }

    /// Hands each whole request message received so far to a bidirectional call's handler.
    private func deliverWholeRequests(of request: GRPCRequest, to call: ServerCall) {
        while !call.hasEnded, let length = GRPCRequest.wholeMessageLength(request.body) {
            let body = request.body
            request.body.removeFirst(5 + length)
            guard body[0] == 0 else {
                call.fail(CallStatus(code: .internal, message: GRPCRequest.compressedMessage(flag: body[0])))
                return
            }
            call.registered.handler(call, body[5..<(5 + length)])
        }
    }

    private static func append(_ bytes: Span<UInt8>, to body: inout [UInt8]) {
        body.reserveCapacity(body.count + bytes.count)
        for index in bytes.indices { body.append(bytes[index]) }
    }

    func requestEnded(on streamID: Int32) {
        guard let request = request(of: streamID), let call = request.call, call.isAwaitingRequest, !call.hasEnded
        else {
            return
        }
        if call.kind == .bidirectionalStreaming {
            call.isAwaitingRequest = false
            guard request.body.isEmpty else {
                call.fail(CallStatus(code: .invalidArgument, message: "the last request message is cut short"))
                return
            }
            if let onRequestsEnded = call.onRequestsEnded { onRequestsEnded() } else { call.finish() }
            return
        }
        call.isAwaitingRequest = false
        if call.timerSlot >= 0 { server.callTimers.remove(call) }
        switch request.message() {
        case .refused(let status):
            call.fail(status)
        case .accepted(let message):
            call.registered.handler(call, message)
            if !call.hasEnded, let deadline = call.deadline {
                server.callTimers.add(call, at: deadline, .deadline)
            }
        }
        request.body = []
    }

    func streamClosed(_ streamID: Int32, errorCode: UInt32) {
        guard let request = streams.removeValue(forKey: streamID) else { return }
        if lastRequest?.stream == streamID { lastRequest = nil }
        if !waitingForWritability.isEmpty { waitingForWritability[streamID] = nil }
        // A call still open was cancelled by the client (RST_STREAM) or the session's end.
        if let call = request.call, !call.hasEnded {
            openCalls -= 1
            server.callTimers.remove(call)
            server.metrics.recordCall(methodIndex: call.methodIndex, code: .cancelled, startedAt: call.startedAt)
            call.cancel()
        }
        if isDraining { scheduleFlush() }
    }

    /// The principal of the call's `authorization: Bearer` token (or, without one, of the
    /// connection's client certificate), or the status refusing it.
    private func authenticate(_ authorization: [UInt8]?) -> Admission<any Principal> {
        if let lastAuthorization, lastAuthorization.value == authorization {
            return .accepted(lastAuthorization.principal)
        }
        let token = authorization.flatMap { [MetadataEntry(key: "authorization", value: $0)].bearerToken }
        let admission = server.authenticate(token: token, on: connection)
        if case .accepted(let principal) = admission { lastAuthorization = (authorization, principal) }
        return admission
    }

    /// Answers a request refused before its call started, and counts the refusal.
    private func answer(_ streamID: Int32, _ fault: GRPCRequest.Fault) {
        switch fault {
        case .http(let status):
            session.respondWithoutBody(streamID, headers: HeaderBlock([":status": String(status)]))
            recordRefusal(
                StreamID(rawValue: UInt32(streamID)),
                CallStatus(code: .invalidArgument, message: "HTTP \(status)")
            )
        case .grpc(let status):
            session.respondWithoutBody(streamID, headers: trailers(status, withResponseHeaders: true))
            recordRefusal(StreamID(rawValue: UInt32(streamID)), status)
        }
        scheduleFlush()
    }

    private func trailers(_ status: CallStatus, withResponseHeaders: Bool) -> HeaderBlock {
        GRPCStatusEncoding.trailers(
            status,
            detailsType: server.configuration.statusDetailsType,
            withResponseHeaders: withResponseHeaders
        )
    }

    // MARK: Called by ServerCall

    func sendMessage(_ message: [UInt8], on streamID: StreamID) {
        let stream = Int32(streamID.rawValue)
        guard let request = request(of: stream) else { return }
        startResponse(request, stream)
        session.send(length: 5 + message.count, on: stream) { output in
            GRPCStatusEncoding.appendPrefix(length: message.count, to: &output)
            for byte in message { output.append(byte) }
        }
        scheduleFlush()
    }

    func callEnded(_ call: ServerCall, status: CallStatus) {
        let stream = Int32(call.streamID.rawValue)
        guard let request = request(of: stream) else { return }
        if request.isResponding {
            session.finish(stream, trailers: trailers(status, withResponseHeaders: false))
        } else {
            session.respondWithoutBody(stream, headers: trailers(status, withResponseHeaders: true))
        }
        finishBookkeeping(for: call, code: status.code, message: status.message)
    }

    func callAnswered(_ call: ServerCall, response: [UInt8]) {
        callAnswered(call, length: response.count) { output in
            for byte in response { output.append(byte) }
        }
    }

    /// The response's header block, the message (written in place after its prefix) and the OK
    /// trailers, queued in the session.
    func callAnswered(_ call: ServerCall, length: Int, writingWith write: (inout OutputSpan<UInt8>) -> Void) {
        let stream = Int32(call.streamID.rawValue)
        guard let request = request(of: stream) else { return }
        startResponse(request, stream)
        session.send(length: 5 + length, on: stream) { output in
            GRPCStatusEncoding.appendPrefix(length: length, to: &output)
            write(&output)
        }
        session.finish(stream, trailers: GRPCStatusEncoding.okTrailers)
        finishBookkeeping(for: call, code: .ok)
    }

    private func startResponse(_ request: GRPCRequest, _ stream: Int32) {
        guard !request.isResponding else { return }
        request.isResponding = true
        session.respond(stream, headers: GRPCStatusEncoding.responseHeaders)
    }

    func callIsWaitingForWritability(_ call: ServerCall) {
        waitingForWritability[Int32(call.streamID.rawValue)] = call
    }

    func timerExpired(for call: ServerCall) {
        guard !call.hasEnded else { return }
        callEnded(call, status: CallStatus(code: .deadlineExceeded, message: call.timerReason.message))
        call.cancel()
    }

    /// Log line, metrics and timer of a call that just ended.
    private func finishBookkeeping(for call: ServerCall, code: StatusCode, message: String = "") {
        openCalls -= 1
        if server.logsEveryCall || Self.isServerFault(code) { logEnd(of: call, code, message) }
        if call.timerSlot >= 0 { server.callTimers.remove(call) }
        waitingForWritability[Int32(call.streamID.rawValue)] = nil
        server.recordCallEnd(methodIndex: call.methodIndex, code: code, startedAt: call.startedAt)
        scheduleFlush()
    }

    // MARK: Lifecycle

    /// Answers a connection over the server's limit with SETTINGS and a GOAWAY (REFUSED_STREAM:
    /// nothing was processed, the client may retry elsewhere or later), then closes it.
    static func reject(_ connection: Connection) {
        let refusal = RefusedSession()
        var farewell: [UInt8] = []
        let session = HTTP2ServerSession(
            settings: .init(maxConcurrentStreams: 0, initialWindowSize: 65_535, maxHeaderListSize: 4_096),
            delegate: refusal
        )
        session.goAway(errorCode: HTTP2ErrorCode.refusedStream, reason: CloseReason.tooManyConnections.description)
        session.takeOutput(appendingTo: &farewell)
        connection.delegate = refusal
        try? connection.write(farewell)
        connection.closeWhenWritesFlushed()
    }

    func admit() {
        guard connection.state == .open else { return }
        do {
            try connection.startReading()
        } catch {
            connection.close()
        }
        // The server's SETTINGS go first, whatever the client sends.
        scheduleFlush()
    }

    func tearDownAfterPeerClosed() {
        guard connection.state == .open else { return }
        closing = closing ?? (.peerClosed, connection.loop.now)
        cancelAllCalls()
        connection.close()
    }

    func drain() {
        guard !isDraining else { return }
        isDraining = true
        session.goAway()
        scheduleFlush()
    }

    func tick(now: UInt64) {
        if let closing {
            if now >= closing.since + server.configuration.closeGracePeriodMilliseconds { connection.close() }
            return
        }
        let configuration = server.configuration.connection
        if isDraining, now >= lastActivity + configuration.drainGracePeriodMilliseconds, openCalls > 0 {
            beginClose(.drained)
        } else if openCalls == 0, let idle = configuration.idleTimeoutMilliseconds, now >= lastActivity + idle {
            session.goAway()
            beginClose(.idleTimeout)
        }
    }

    func evict() {
        closing = closing ?? (.bufferBudgetExceeded, connection.loop.now)
        cancelAllCalls()
        connection.close()
    }

    private func beginClose(_ reason: CloseReason) {
        guard closing == nil else { return }
        closing = (reason, connection.loop.now)
        cancelAllCalls()
        session.takeOutput(appendingTo: &outbound)
        if !outbound.isEmpty, connection.state == .open {
            try? connection.write(outbound)
            outbound.removeAll()
        }
        connection.closeWhenWritesFlushed()
    }

    private func cancelAllCalls() {
        waitingForWritability = [:]
        let open = streams.values.compactMap(\.call).filter { !$0.hasEnded }
        streams = [:]
        lastRequest = nil
        openCalls = 0
        for call in open {
            server.callTimers.remove(call)
            server.metrics.recordCall(methodIndex: call.methodIndex, code: .cancelled, startedAt: call.startedAt)
            call.cancel()
        }
    }

    /// Brings the server's ``BufferBudget`` up to date with the request bodies this connection holds.
    private func countBodiesHeld() {
        let held = streams.values.reduce(0) { $0 + $1.body.count }
        guard held != countedBodyBytes else { return }
        server.buffers.tally.byteCount += held - countedBodyBytes
        countedBodyBytes = held
        server.buffers.check(server)
    }

    // MARK: Output

    /// Runs `body` (a read) and holds what it produced until the loop has read every connection
    /// that was ready (``OutputBeforePolling``).
    private func holdingOutputUntilPolling(_ body: () -> Void) {
        batchDepth += 1
        server.outputBeforePolling.reading(body)
        batchDepth -= 1
        guard batchDepth == 0, !isOutputHeld else { return }
        isOutputHeld = true
        server.outputBeforePolling.hold(self)
    }

    /// Writes now unless a batch is open or a read is being handled (nghttp2 produces output only
    /// outside its own reading).
    private func scheduleFlush() {
        guard batchDepth == 0, !isOutputHeld, !isReceiving else { return }
        if server.outputBeforePolling.isReading {
            isOutputHeld = true
            server.outputBeforePolling.hold(self)
        } else if server.holdOutput(of: self) {
            isOutputHeld = true
        } else {
            flush()
        }
    }

    func flushHeldOutput() {
        isOutputHeld = false
        flush()
    }

    private func flush() {
        guard closing == nil, connection.state == .open else { return }
        guard session.takeOutput(appendingTo: &outbound) else {
            beginClose(.protocolViolation("HTTP/2: the session failed"))
            return
        }
        if !outbound.isEmpty {
            do {
                try connection.write(outbound)
            } catch {
                outbound.removeAll()
                if error == .noBufferSpace {
                    closing = (.outboundBufferFull, connection.loop.now)
                    cancelAllCalls()
                    connection.close()
                }
                return
            }
            outbound.removeAll(keepingCapacity: outbound.capacity <= 64 * 1024)
            if connection.pendingWriteByteCount > 0 { server.buffers.check(server) }
        }
        if !session.isActive {
            // Both sides are done (a GOAWAY answered, every stream closed).
            closing = (isDraining ? .drained : .peerClosed, connection.loop.now)
            connection.closeWhenWritesFlushed()
            return
        }
        resumeIfWritable()
    }

    private func resumeIfWritable() {
        guard isWritable else { return }
        if isReadingPaused {
            isReadingPaused = false
            try? connection.startReading()
        }
        guard !waitingForWritability.isEmpty else { return }
        for (stream, call) in waitingForWritability where canSend(on: call) {
            waitingForWritability[stream] = nil
            call.becameWritable()
        }
    }
}

/// The session and connection delegate of a connection refused at accept: it ignores everything.
private final class RefusedSession: HTTP2ServerSessionDelegate, ConnectionDelegate {
    func requestBegan(on streamID: Int32) {}
    func requestHeader(name: Span<UInt8>, value: Span<UInt8>, on streamID: Int32) {}
    func requestHeadersEnded(on streamID: Int32, endStream: Bool) {}
    func requestData(_ bytes: Span<UInt8>, on streamID: Int32) {}
    func requestEnded(on streamID: Int32) {}
    func streamClosed(_ streamID: Int32, errorCode: UInt32) {}
    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {}
    func connectionDidClose(_ connection: Connection, error: UVError?) {}
}
