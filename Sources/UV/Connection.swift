import CLibUV

/// Receives a ``Connection``'s events, on the loop thread.
public protocol ConnectionDelegate: AnyObject {
    /// Bytes arrived. They are lent, valid only during this call: copy what must outlive it.
    func connection(_ connection: Connection, didRead bytes: Span<UInt8>)
    /// The peer closed its sending side. The default closes the connection.
    func connectionDidReachEndOfInput(_ connection: Connection)
    /// Every queued write has reached the kernel. The default does nothing.
    func connectionDidFlushWrites(_ connection: Connection)
    /// The connection is closed and its memory released; `error` says why if it failed. Last event.
    func connectionDidClose(_ connection: Connection, error: UVError?)
}

extension ConnectionDelegate {
    /// Closes the connection.
    public func connectionDidReachEndOfInput(_ connection: Connection) { connection.close() }
    /// Does nothing.
    public func connectionDidFlushWrites(_ connection: Connection) {}
}

/// A byte stream over TCP or a Unix-domain socket.
///
/// Ownership: libuv holds a retained reference from the moment the handle is initialised until its
/// close callback, so a connection lives until closed however its users hold it. The delegate is held
/// strongly until ``ConnectionDelegate/connectionDidClose(_:error:)`` and released after it.
///
/// Writes: ``write(_:)`` first tries to write synchronously (`uv_try_write`); only what the kernel does
/// not take is copied into a request that owns its bytes until libuv's write callback. Queued bytes are
/// capped by ``maxPendingWriteBytes``: a peer that stops reading can cost at most that much.
///
/// Closing is deferred to libuv's close callback, so a delegate may close the connection from inside
/// its own read callback; no event but `connectionDidClose` follows.
public final class Connection {
    /// The lifecycle of the handle.
    public enum State: Sendable {
        /// Usable; goes to `closing` on ``close()`` or an I/O error.
        case open
        /// `uv_close` was called; queued writes are cancelled; goes to `closed` in the close callback.
        case closing
        /// The handle's memory is freed; terminal.
        case closed
    }

    /// Default cap on bytes queued for writing.
    public static let defaultMaxPendingWriteBytes = 4 << 20

    enum Kind {
        case tcp
        case unix
    }

    public let loop: EventLoop
    let kind: Kind
    let stream: UnsafeMutablePointer<uv_stream_t>
    public private(set) var state: State = .open
    public var delegate: (any ConnectionDelegate)?
    /// Most bytes that may wait for the kernel; a write that would exceed it is refused.
    public var maxPendingWriteBytes = Connection.defaultMaxPendingWriteBytes
    /// Bytes accepted by ``write(_:)`` that the kernel has not taken yet.
    public private(set) var pendingWriteByteCount = 0
    /// A count shared with other connections that this one keeps its pending write bytes in too
    /// (a server's total, to bound what all its peers together can make it hold). Set it before the
    /// first write: bytes queued earlier would later be taken out of a count they were never in.
    public var pendingWriteTally: ByteTally?
    public private(set) var isReading = false
    /// TLS between the socket and the delegate, once ``secure(with:)`` installed it.
    public private(set) var security: (any ConnectionSecurity)?
    /// Why the security layer failed (a TLS handshake's or record's error), when it closed the
    /// connection; the delegate's close error is then ``UVError/securityFailed``.
    public private(set) var securityFailure: String?
    private var closeError: UVError?
    private var closesWhenFlushed = false
    /// Set by ``closeWhenWritesFlushed()``: from then on input is read and dropped, never delivered.
    private var discardsInput = false
    /// While a flushed connection waits for its peer to close (``closeWhenWritesFlushed()``).
    private var lingerTimer: LoopTimer?
    /// How long a flushed connection waits for its peer's end of input before closing anyway.
    static let lingerLimit: Duration = .milliseconds(500)

    /// Initialises an unconnected handle of `kind` on `loop`.
    init(loop: EventLoop, kind: Kind) {
        self.loop = loop
        self.kind = kind
        switch kind {
        case .tcp:
            let tcp = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
            // uv_tcp_init and uv_pipe_init fail only for invalid flags; these pass none.
            precondition(uv_tcp_init(loop.loop, tcp) == 0)
            stream = tcp.asStream
        case .unix:
            let pipe = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
            precondition(uv_pipe_init(loop.loop, pipe, 0) == 0)
            stream = pipe.asStream
        }
        retainWhileOpen(stream.asHandle)
    }

    deinit {
        precondition(state == .closed, "a Connection must be closed before it is released")
    }

    /// Connects to `endpoint`; `completion` runs later, on the loop thread, with the open connection or
    /// the error (for example `connectionRefused`).
    /// - Throws: `UVError` at once, without calling `completion`, if the connect cannot start (for
    ///   example `invalidArgument` for a host that is not an IP literal).
    public static func connect(
        to endpoint: Endpoint,
        on loop: EventLoop,
        completion: @escaping (Result<Connection, UVError>) -> Void
    ) throws(UVError) {
        loop.assertOnLoopThread()
        let connection = Connection(loop: loop, kind: endpoint.isUnix ? .unix : .tcp)
        switch endpoint {
        case .tcp(let host, let port):
            let tcp = connection.tcpHandle
            do throws(UVError) {
                try SocketAddress.withSockaddr(host: host, port: port) { (address) throws(UVError) in
                    let request = ConnectRequest.make(connection: connection, completion: completion)
                    do throws(UVError) {
                        try uvCheck(uv_tcp_connect(request, tcp, address, Trampolines.connected))
                    } catch {
                        ConnectRequest.discard(request)
                        throw error
                    }
                }
            } catch {
                connection.close(error: error)
                throw error
            }
        case .unix(let path):
            // uv_pipe_connect reports every failure through the callback.
            let request = ConnectRequest.make(connection: connection, completion: completion)
            uv_pipe_connect(request, connection.pipeHandle, path, Trampolines.connected)
        }
    }

    /// Starts delivering bytes to the delegate.
    public func startReading() throws(UVError) {
        loop.assertOnLoopThread()
        guard state == .open else { throw .notConnected }
        guard !isReading else { return }
        try uvCheck(uv_read_start(stream, Trampolines.allocate, Trampolines.read))
        isReading = true
    }

    /// Stops delivering bytes until ``startReading()``; the kernel buffers, then the peer's writes stall.
    public func stopReading() {
        loop.assertOnLoopThread()
        guard state == .open, isReading else { return }
        uv_read_stop(stream)
        isReading = false
    }

    /// Sends `bytes` after everything written before.
    /// - Throws: `UVError.notConnected` if closing, closed or flushing to close; `UVError.noBufferSpace` if the pending
    ///   bytes would exceed ``maxPendingWriteBytes`` (nothing is written then; the connection stays open);
    ///   another `UVError` if the socket failed (the connection is then closing).
    public func write(_ bytes: [UInt8]) throws(UVError) {
        loop.assertOnLoopThread()
        guard state == .open, !closesWhenFlushed else { throw .notConnected }
        guard !bytes.isEmpty else { return }
        // Plaintext counts against the cap: a sealed write must not be refused once sealed, or the
        // session's record sequence would skip it.
        guard pendingWriteByteCount + bytes.count <= maxPendingWriteBytes else { throw .noBufferSpace }
        guard let security else { return try send(bytes) }
        // Records go to the socket as OpenSSL writes them (no array of them is made and copied).
        var failure: UVError?
        security.seal(bytes) { record in
            guard failure == nil else { return }
            do throws(UVError) {
                try send(record)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Puts `bytes` on the socket after everything before them, past the cap.
    private func send(_ bytes: [UInt8]) throws(UVError) {
        guard !bytes.isEmpty else { return }
        var failure: UVError?
        bytes.withUnsafeBytes { raw in
            do throws(UVError) {
                try send(raw)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Puts `bytes` on the socket after everything before them, past the cap: what the kernel does
    /// not take at once is copied into a queued write.
    private func send(_ bytes: UnsafeRawBufferPointer) throws(UVError) {
        guard !bytes.isEmpty else { return }
        var written = 0
        if pendingWriteByteCount == 0 {
            // Nothing queued, so order allows writing now; usually the kernel takes everything.
            var buffer = uv_buf_init(
                UnsafeMutableRawPointer(mutating: bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
                UInt32(bytes.count)
            )
            written = Int(uv_try_write(stream, &buffer, 1))
            if written == Int(UV_EAGAIN.rawValue) {
                written = 0
            } else if written < 0 {
                let error = UVError(code: Int32(written))
                close(error: error)
                throw error
            }
            if written == bytes.count { return }
        }
        try enqueueWrite(UnsafeRawBufferPointer(rebasing: bytes[written...]))
    }

    /// Copies `bytes` into a write request that owns them until libuv's write callback.
    private func enqueueWrite(_ bytes: UnsafeRawBufferPointer) throws(UVError) {
        let request = WriteRequest.make(copying: bytes)
        var buffer = uv_buf_init(WriteRequest.bytes(of: request), UInt32(bytes.count))
        do {
            try uvCheck(uv_write(request, stream, &buffer, 1, Trampolines.written))
        } catch {
            WriteRequest.free(request)
            close(error: error)
            throw error
        }
        pendingWriteByteCount += bytes.count
        pendingWriteTally?.byteCount += bytes.count
    }

    /// Called by libuv when a queued write finished or was cancelled by close.
    func writeCompleted(byteCount: Int, status: Int32) {
        pendingWriteByteCount -= byteCount
        pendingWriteTally?.byteCount -= byteCount
        guard state == .open else { return }
        if status < 0 {
            close(error: UVError(code: status))
        } else if pendingWriteByteCount == 0 {
            if closesWhenFlushed {
                finishAfterFlush()
            } else {
                delegate?.connectionDidFlushWrites(self)
            }
        }
    }

    /// Called by libuv after a read: bytes, end of input or an error.
    func readCompleted(count: Int, buffer: UnsafeMutablePointer<CChar>?) {
        if discardsInput {
            if count < 0 { close() }  // the peer's end of input (or an error): nothing is left to wait for
            return
        }
        if count > 0, let buffer {
            if let security {
                return readSecured(UnsafeRawBufferPointer(start: buffer, count: count), through: security)
            }
            let bytes = UnsafeBufferPointer(
                start: UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self),
                count: count
            )
            delegate?.connection(self, didRead: bytes.span)
        } else if count == Int(UV_EOF.rawValue) {
            stopReading()
            delegate?.connectionDidReachEndOfInput(self)
        } else if count < 0 {
            close(error: UVError(code: Int32(count)))
        }
        // count == 0 is EAGAIN: nothing to do.
    }

    /// Puts `security` between the socket and the delegate, and starts its handshake. Call it before
    /// the first write, on an open connection.
    public func secure(with security: any ConnectionSecurity) throws(UVError) {
        loop.assertOnLoopThread()
        guard state == .open else { throw .notConnected }
        precondition(self.security == nil && pendingWriteByteCount == 0, "secure a connection before writing to it")
        self.security = security
        var output: [UInt8] = []
        security.start(output: &output)
        try send(output)
    }

    /// Opens what the socket read, answers the handshake, and gives the delegate the plaintext.
    private func readSecured(_ bytes: UnsafeRawBufferPointer, through security: any ConnectionSecurity) {
        let plaintext = loop.plaintextBuffer(atLeast: security.plaintextCapacity(forReading: bytes.count))
        var output: [UInt8] = []
        let opening = security.open(bytes, into: plaintext, output: &output)
        do throws(UVError) {
            try send(output)
        } catch {
            return  // the socket failed: closing
        }
        if opening.plaintextCount > 0 {
            let opened = UnsafeBufferPointer(
                start: plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self),
                count: opening.plaintextCount
            )
            delegate?.connection(self, didRead: opened.span)
        }
        guard state == .open, !discardsInput else { return }
        if let failure = opening.failure {
            securityFailure = failure
            closeError = .securityFailed
            // The alert in `output` goes out first; nothing more is read.
            discardsInput = true
            closesWhenFlushed = true
            if pendingWriteByteCount == 0 { finishAfterFlush() }
        } else if opening.endOfInput {
            stopReading()
            delegate?.connectionDidReachEndOfInput(self)
        }
    }

    /// Closes once every queued write has reached the peer's side: the delegate gets no more input,
    /// and the written bytes are followed by end of input (a half-close). Then the connection waits
    /// for the peer's own end of input, at most `lingerLimit`, reading and dropping what the peer
    /// still sends: closing a socket with unread input makes the kernel reset the connection, and a
    /// reset can discard the last bytes written (a GOAWAY saying why) before the peer reads them.
    public func closeWhenWritesFlushed() {
        loop.assertOnLoopThread()
        guard state == .open, !closesWhenFlushed else { return }
        if let security {
            var notice: [UInt8] = []
            security.closeNotify(output: &notice)
            guard (try? send(notice)) != nil else { return }  // the socket failed: closing
        }
        closesWhenFlushed = true
        discardsInput = true
        if !isReading {
            // Fails only for a stream that cannot be read any more (its input ended): nothing to wait for.
            guard uv_read_start(stream, Trampolines.allocate, Trampolines.read) == 0 else {
                close()
                return
            }
            isReading = true
        }
        if pendingWriteByteCount == 0 { finishAfterFlush() }
    }

    /// Half-closes the flushed connection and gives the peer ``lingerLimit`` to close its side.
    private func finishAfterFlush() {
        guard state == .open, lingerTimer == nil else { return }
        let request = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        guard uv_shutdown(request, stream, Trampolines.shutDown) == 0 else {
            request.deallocate()
            close()
            return
        }
        let timer = LoopTimer(loop: loop)
        timer.start(after: Self.lingerLimit) { [weak self] in self?.close() }
        lingerTimer = timer
    }

    /// The local address (for TCP, with the port the system chose).
    public func localEndpoint() throws(UVError) -> Endpoint {
        guard state == .open else { throw .notConnected }
        switch kind {
        case .tcp:
            let tcp = tcpHandle
            return try SocketAddress.endpoint { uv_tcp_getsockname(tcp, $0, $1) }
        case .unix:
            return .unix(path: try PipeName.local(of: pipeHandle))
        }
    }

    /// The peer's address.
    public func remoteEndpoint() throws(UVError) -> Endpoint {
        guard state == .open else { throw .notConnected }
        switch kind {
        case .tcp:
            let tcp = tcpHandle
            return try SocketAddress.endpoint { uv_tcp_getpeername(tcp, $0, $1) }
        case .unix:
            return .unix(path: try PipeName.peer(of: pipeHandle))
        }
    }

    var tcpHandle: UnsafeMutablePointer<uv_tcp_t> {
        precondition(kind == .tcp)
        return UnsafeMutableRawPointer(stream).assumingMemoryBound(to: uv_tcp_t.self)
    }

    var pipeHandle: UnsafeMutablePointer<uv_pipe_t> {
        precondition(kind == .unix)
        return UnsafeMutableRawPointer(stream).assumingMemoryBound(to: uv_pipe_t.self)
    }

    /// Turns off Nagle's algorithm: RPC frames are small and latency-bound.
    func disableNagle() {
        if kind == .tcp { uv_tcp_nodelay(tcpHandle, 1) }
    }

    /// Closes the connection, cancelling queued writes; idempotent.
    public func close() {
        close(error: nil)
    }

    /// Closes with `error` as the reason reported to the delegate (the first reason wins).
    func close(error: UVError?) {
        guard state == .open else { return }
        loop.assertOnLoopThread()
        state = .closing
        isReading = false
        closeError = closeError ?? error
        lingerTimer?.close()
        lingerTimer = nil
        uv_close(stream.asHandle, Trampolines.closed)
    }
}

extension Connection: HandleOwner {
    func handleDidClose() {
        let retained = stream.pointee.data
        state = .closed
        switch kind {
        case .tcp: tcpHandle.deallocate()
        case .unix: pipeHandle.deallocate()
        }
        let delegate = self.delegate
        self.delegate = nil
        delegate?.connectionDidClose(self, error: closeError)
        releaseOwner(retained)
    }
}

extension Endpoint {
    var isUnix: Bool {
        if case .unix = self { return true }
        return false
    }
}
