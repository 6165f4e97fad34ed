import CNGHTTP2

/// What a server session tells its owner as it reads a client's bytes. Every callback runs inside
/// ``HTTP2ServerSession/receive(_:)``.
public protocol HTTP2ServerSessionDelegate: AnyObject {
    /// A request's header block begins on a new stream.
    func requestBegan(on streamID: Int32)
    /// One field of the request's header block, in order (pseudo-headers first).
    func requestHeader(name: Span<UInt8>, value: Span<UInt8>, on streamID: Int32)
    /// The request's header block is complete; `endStream`: the request has no body.
    func requestHeadersEnded(on streamID: Int32, endStream: Bool)
    /// A piece of the request's body.
    func requestData(_ bytes: Span<UInt8>, on streamID: Int32)
    /// The client ended its side of the stream after a body (END_STREAM on DATA or on trailers).
    func requestEnded(on streamID: Int32)
    /// The stream is closed: answered in full, reset by either side, or refused. `errorCode` is the
    /// HTTP/2 error code (0: NO_ERROR).
    func streamClosed(_ streamID: Int32, errorCode: UInt32)
}

/// A failure of the whole session: the peer broke HTTP/2 (a bad preface, a malformed frame, a flood).
/// What the session queued for the peer (a GOAWAY with the reason) is still to be taken and sent;
/// then the connection closes.
public struct HTTP2Error: Error, CustomStringConvertible {
    public let code: Int32
    public var description: String {
        code == Self.resetFlood ? "too many streams reset by the peer" : String(cString: nghttp2_strerror(code))
    }

    /// Ours, not nghttp2's: the peer reset streams faster than ``HTTP2ServerSession/ResetBudget`` allows.
    static let resetFlood: Int32 = -1_000_001

    /// The HTTP/2 error code the GOAWAY that ends the session carries; `nil` when the peer does not
    /// speak HTTP/2 (a wrong preface), which gets no answer.
    public var goAwayCode: UInt32? {
        switch code {
        case NGHTTP2_ERR_BAD_CLIENT_MAGIC.rawValue: nil
        case NGHTTP2_ERR_FLOODED.rawValue, NGHTTP2_ERR_TOO_MANY_CONTINUATIONS.rawValue, Self.resetFlood:
            HTTP2ErrorCode.enhanceYourCalm
        default: HTTP2ErrorCode.protocolError
        }
    }
}

/// HTTP/2 error codes (RFC 9113, section 7) the server sends.
public enum HTTP2ErrorCode {
    public static let noError: UInt32 = 0x0
    public static let protocolError: UInt32 = 0x1
    public static let internalError: UInt32 = 0x2
    public static let refusedStream: UInt32 = 0x7
    public static let cancel: UInt32 = 0x8
    public static let enhanceYourCalm: UInt32 = 0xb
}

/// The server side of one HTTP/2 connection, over nghttp2 (RFC 9113): the only Swift that touches
/// nghttp2. It does no I/O: the owner feeds it the bytes read (``receive(_:)``) and writes what
/// ``takeOutput(appendingTo:)`` gives. Responses' bodies are queued here per stream and handed to
/// nghttp2 as each stream's flow-control window allows, so a peer that reads slowly holds what
/// ``pendingByteCount(on:)`` reports and no more than the owner lets it queue.
public final class HTTP2ServerSession {
    /// What the server announces in its SETTINGS.
    public struct Settings: Sendable {
        public var maxConcurrentStreams: UInt32
        public var initialWindowSize: UInt32
        public var maxHeaderListSize: UInt32

        public init(maxConcurrentStreams: UInt32, initialWindowSize: UInt32, maxHeaderListSize: UInt32) {
            self.maxConcurrentStreams = maxConcurrentStreams
            self.initialWindowSize = initialWindowSize
            self.maxHeaderListSize = maxHeaderListSize
        }
    }

    /// A response body queued for one stream, and the trailers that end it once it is sent. A class:
    /// the body is appended to and taken from in place, never copied with its entry.
    final class Outgoing {
        var bytes: [UInt8] = []
        var sent = 0
        var trailers: HeaderBlock?
        /// nghttp2 asked for data and got none: it waits for ``HTTP2ServerSession/resume(_:)``.
        var isDeferred = false
        var pending: Int { bytes.count - sent }
    }

    private var session: OpaquePointer?
    /// Unowned: the delegate owns the session, and a weak reference cost a side-table load on
    /// every callback (every header field of every request).
    public unowned(unsafe) let delegate: any HTTP2ServerSessionDelegate
    private var outgoing: [Int32: Outgoing] = [:]
    /// The stream last begun or looked up in ``outgoing``: a response's steps (respond, send,
    /// finish, nghttp2's reads of its body) come for one stream in a row, so most lookups end here
    /// without hashing its id, which cost more than the step itself.
    private var lastOutgoing: (id: Int32, stream: Outgoing)?
    /// Body bytes queued on every stream and not yet taken (the sum of ``Outgoing/pending``), kept
    /// as they change: the owner asks for it on every answer.
    public private(set) var pendingByteCount = 0

    /// RST_STREAMs the peer may send: a burst, refilled at a rate per second. Past it the session
    /// ends with GOAWAY(ENHANCE_YOUR_CALM): opening and resetting streams at once makes the server
    /// start work for each and costs the peer nothing ("rapid reset", CVE-2023-44487). nghttp2's own
    /// limit ends it with INTERNAL_ERROR, which says the fault is the server's.
    struct ResetBudget {
        static let burst = 200.0
        static let perSecond = 100.0
        var tokens = burst
        var refilledAt = ContinuousClock.now

        /// Takes one reset from the budget; `false` when none is left.
        mutating func take() -> Bool {
            let now = ContinuousClock.now
            let elapsed = refilledAt.duration(to: now) / .seconds(1)
            tokens = min(Self.burst, tokens + elapsed * Self.perSecond)
            refilledAt = now
            guard tokens >= 1 else { return false }
            tokens -= 1
            return true
        }
    }
    private var resetBudget = ResetBudget()
    private var isResetFlooded = false

    /// nghttp2's own defences stay on: a peer that makes it queue too many SETTINGS or PING
    /// acknowledgements, resets streams faster than its rate limit ("rapid reset", CVE-2023-44487) or
    /// sends too many CONTINUATION frames gets a GOAWAY and ``receive(_:)`` throws.
    public init(settings: Settings, delegate: any HTTP2ServerSessionDelegate) {
        self.delegate = delegate
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, Self.beginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, Self.header)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, Self.frameReceived)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, Self.dataChunkReceived)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, Self.streamClosed)
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        defer { nghttp2_option_del(option) }
        // Closed streams kept for priority bookkeeping cost memory per stream and serve nothing here.
        nghttp2_option_set_no_closed_streams(option, 1)
        // Streams beyond the announced limit before the peer acknowledged it are refused too.
        nghttp2_option_set_max_settings(option, 32)
        let userData = Unmanaged.passUnretained(self).toOpaque()
        nghttp2_session_server_new2(&session, callbacks, userData, option)
        var entries = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: settings.maxConcurrentStreams
            ),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue),
                value: settings.initialWindowSize
            ),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                value: settings.maxHeaderListSize
            ),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
        ]
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count)
    }

    deinit {
        nghttp2_session_del(session)
    }

    /// Feeds the bytes the peer sent; the delegate hears of what they carry before this returns.
    public func receive(_ bytes: Span<UInt8>) throws(HTTP2Error) {
        let result = bytes.withUnsafeBufferPointer { buffer in
            nghttp2_session_mem_recv(session, buffer.baseAddress, buffer.count)
        }
        if isResetFlooded { throw HTTP2Error(code: HTTP2Error.resetFlood) }
        if result < 0 { throw HTTP2Error(code: Int32(result)) }
    }

    /// Appends every frame the session has ready to `output` (SETTINGS, acknowledgements, headers,
    /// as much of the queued bodies as the peer's windows allow, trailers, RST_STREAM, GOAWAY).
    /// - Returns: `false` when the session failed and must be closed.
    @discardableResult
    public func takeOutput(appendingTo output: inout [UInt8]) -> Bool {
        while true {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            if count < 0 { return false }
            guard count > 0, let data else { return true }
            output.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
        }
    }

    /// Whether the session has more to do: the peer may still send, or frames wait to be sent. When
    /// neither, the connection may close.
    public var isActive: Bool {
        nghttp2_session_want_read(session) != 0 || nghttp2_session_want_write(session) != 0
    }

    /// Starts the response on `streamID` with `headers`; its body follows by ``send(_:on:)`` and
    /// ends with ``finish(_:trailers:)``.
    public func respond(_ streamID: Int32, headers: HeaderBlock) {
        let stream = Outgoing()
        if let replaced = outgoing.updateValue(stream, forKey: streamID) { pendingByteCount -= replaced.pending }
        lastOutgoing = (streamID, stream)
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: Self.readBody)
        headers.withFields { fields in
            _ = nghttp2_submit_response(session, streamID, fields.baseAddress, fields.count, &provider)
        }
    }

    /// A whole response in one header block, ending the stream (gRPC's "trailers-only" answer).
    public func respondWithoutBody(_ streamID: Int32, headers: HeaderBlock) {
        headers.withFields { fields in
            _ = nghttp2_submit_response(session, streamID, fields.baseAddress, fields.count, nil)
        }
    }

    /// Queues `bytes` of the body of the response begun on `streamID`.
    public func send(_ bytes: some Collection<UInt8>, on streamID: Int32) {
        guard let stream = outgoingStream(streamID) else { return }
        let before = stream.bytes.count
        stream.bytes.append(contentsOf: bytes)
        pendingByteCount += stream.bytes.count - before
        resume(stream, streamID)
    }

    /// Queues, on `streamID`, a body part of `length` bytes that `write` writes in place.
    public func send(length: Int, on streamID: Int32, writingWith write: (inout OutputSpan<UInt8>) -> Void) {
        guard let stream = outgoingStream(streamID) else { return }
        stream.bytes.append(addingCapacity: length, initializingWith: write)
        pendingByteCount += length
        resume(stream, streamID)
    }

    /// Ends the response on `streamID` with `trailers` once its queued body is sent.
    public func finish(_ streamID: Int32, trailers: HeaderBlock) {
        guard let stream = outgoingStream(streamID) else { return }
        stream.trailers = trailers
        resume(stream, streamID)
    }

    /// Body bytes queued on `streamID` that nghttp2 has not taken yet.
    public func pendingByteCount(on streamID: Int32) -> Int {
        outgoingStream(streamID)?.pending ?? 0
    }

    /// Resets `streamID` with HTTP/2 error code `errorCode`.
    public func reset(_ streamID: Int32, errorCode: UInt32) {
        forget(streamID)
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode)
    }

    /// Sends a GOAWAY naming the last stream the server took up: the streams before it finish, and
    /// the session ends once they have.
    public func goAway(errorCode: UInt32 = 0, reason: String = "") {
        let last = nghttp2_session_get_last_proc_stream_id(session)
        var reasonBytes = Array(reason.utf8)
        _ = nghttp2_submit_goaway(
            session,
            UInt8(NGHTTP2_FLAG_NONE.rawValue),
            last,
            errorCode,
            &reasonBytes,
            reasonBytes.count
        )
    }

    /// Sends a GOAWAY that ends the session at once, with `errorCode`.
    public func terminate(errorCode: UInt32) {
        _ = nghttp2_session_terminate_session(session, errorCode)
    }

    /// Drops `streamID`'s queued body (the stream was reset or closed), and its count.
    private func forget(_ streamID: Int32) {
        if lastOutgoing?.id == streamID { lastOutgoing = nil }
        guard let stream = outgoing.removeValue(forKey: streamID) else { return }
        pendingByteCount -= stream.pending
    }

    /// `outgoing[id]`, from ``lastOutgoing`` when it is that stream.
    private func outgoingStream(_ id: Int32) -> Outgoing? {
        if let lastOutgoing, lastOutgoing.id == id { return lastOutgoing.stream }
        guard let stream = outgoing[id] else { return nil }
        lastOutgoing = (id, stream)
        return stream
    }

    private func resume(_ stream: Outgoing, _ streamID: Int32) {
        guard stream.isDeferred else { return }
        stream.isDeferred = false
        _ = nghttp2_session_resume_data(session, streamID)
    }

    /// Copies up to `capacity` queued body bytes of `streamID` into `buffer` for nghttp2; when the
    /// body is all sent and trailers wait, submits them.
    private func readBody(
        _ streamID: Int32,
        into buffer: UnsafeMutablePointer<UInt8>,
        capacity: Int,
        flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
        guard let stream = outgoingStream(streamID) else {
            return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        let count = min(capacity, stream.pending)
        if count > 0 {
            stream.bytes.withUnsafeBufferPointer { bytes in
                buffer.update(from: bytes.baseAddress! + stream.sent, count: count)
            }
            stream.sent += count
            pendingByteCount -= count
            if stream.sent == stream.bytes.count {
                stream.bytes.removeAll(keepingCapacity: stream.bytes.capacity <= 64 << 10)
                stream.sent = 0
            }
        }
        if stream.pending == 0, let trailers = stream.trailers {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue | NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
            outgoing[streamID] = nil
            if lastOutgoing?.id == streamID { lastOutgoing = nil }
            trailers.withFields { fields in
                _ = nghttp2_submit_trailer(session, streamID, fields.baseAddress, fields.count)
            }
            return count
        }
        if count == 0 {
            stream.isDeferred = true
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        }
        return count
    }

    // MARK: Callbacks

    private static func session(_ userData: UnsafeMutableRawPointer?) -> HTTP2ServerSession {
        Unmanaged<HTTP2ServerSession>.fromOpaque(userData!).takeUnretainedValue()
    }

    private static let beginHeaders: nghttp2_on_begin_headers_callback = { _, frame, userData in
        guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
            frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
        else { return 0 }
        session(userData).delegate.requestBegan(on: frame.pointee.hd.stream_id)
        return 0
    }

    private static let header: nghttp2_on_header_callback = {
        _,
        frame,
        name,
        nameLength,
        value,
        valueLength,
        _,
        userData in
        guard let frame, let name, let value else { return 0 }
        let nameSpan = UnsafeBufferPointer(start: name, count: nameLength).span
        let valueSpan = UnsafeBufferPointer(start: value, count: valueLength).span
        session(userData).delegate.requestHeader(name: nameSpan, value: valueSpan, on: frame.pointee.hd.stream_id)
        return 0
    }

    private static let frameReceived: nghttp2_on_frame_recv_callback = { _, frame, userData in
        guard let frame else { return 0 }
        let header = frame.pointee.hd
        let endStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        let delegate = session(userData).delegate
        switch UInt32(header.type) {
        case NGHTTP2_HEADERS.rawValue where frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST:
            delegate.requestHeadersEnded(on: header.stream_id, endStream: endStream)
        case NGHTTP2_HEADERS.rawValue, NGHTTP2_DATA.rawValue:
            if endStream { delegate.requestEnded(on: header.stream_id) }
        case NGHTTP2_RST_STREAM.rawValue:
            let owner = session(userData)
            if !owner.resetBudget.take() {
                owner.isResetFlooded = true
                // Stops reading the rest of what the peer sent.
                return Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
            }
        default:
            break
        }
        return 0
    }

    private static let dataChunkReceived: nghttp2_on_data_chunk_recv_callback = {
        _,
        _,
        streamID,
        data,
        length,
        userData in
        guard let data else { return 0 }
        session(userData).delegate.requestData(UnsafeBufferPointer(start: data, count: length).span, on: streamID)
        return 0
    }

    private static let streamClosed: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
        let owner = session(userData)
        owner.forget(streamID)
        owner.delegate.streamClosed(streamID, errorCode: errorCode)
        return 0
    }

    private static let readBody: nghttp2_data_source_read_callback = {
        _,
        streamID,
        buffer,
        length,
        flags,
        _,
        userData in
        guard let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        return session(userData).readBody(streamID, into: buffer, capacity: length, flags: flags)
    }
}
