import CLibUV
import Glibc

/// Receives a ``Listener``'s events, on the loop thread.
public protocol ListenerDelegate: AnyObject {
    /// A peer connected. The connection is open but not reading: set its delegate, then call
    /// ``Connection/startReading()`` (or close it, e.g. when over a connection limit).
    func listener(_ listener: Listener, didAccept connection: Connection)
    /// Accepting a peer failed (for example, the process ran out of file descriptors). The listener
    /// keeps listening.
    func listener(_ listener: Listener, didFailToAccept error: UVError)
}

/// A listening TCP or Unix-domain socket.
///
/// Ownership follows ``Connection``: libuv holds the listener until its close callback, and the delegate
/// is held until then. A Unix listener removes its socket file when closed.
public final class Listener {
    public let loop: EventLoop
    /// The bound address; for TCP port 0, with the port the system chose.
    public private(set) var endpoint: Endpoint
    private var lifecycle = HandleLifecycle()
    public var isClosed: Bool { lifecycle.isClosed }
    public var delegate: (any ListenerDelegate)?
    let kind: Connection.Kind
    let stream: UnsafeMutablePointer<uv_stream_t>

    private init(loop: EventLoop, stream: UnsafeMutablePointer<uv_stream_t>, kind: Connection.Kind, endpoint: Endpoint)
    {
        self.loop = loop
        self.stream = stream
        self.kind = kind
        self.endpoint = endpoint
        retainWhileOpen(stream.asHandle)
    }

    deinit {
        precondition(isClosed, "a Listener must be closed before it is released")
    }

    /// Binds to `endpoint` and starts listening.
    /// - Throws: `UVError`, e.g. `addressInUse`, or `invalidArgument` for a host that is not an IP literal.
    public static func listen(
        on endpoint: Endpoint,
        loop: EventLoop,
        backlog: Int32 = 1024,
        delegate: any ListenerDelegate
    ) throws(UVError) -> Listener {
        loop.assertOnLoopThread()
        let listener: Listener
        switch endpoint {
        case .tcp:
            let tcp = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
            precondition(uv_tcp_init(loop.loop, tcp) == 0)
            listener = Listener(loop: loop, stream: tcp.asStream, kind: .tcp, endpoint: endpoint)
        case .unix:
            let pipe = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
            precondition(uv_pipe_init(loop.loop, pipe, 0) == 0)
            listener = Listener(loop: loop, stream: pipe.asStream, kind: .unix, endpoint: endpoint)
        }
        do {
            listener.endpoint = try listener.bind(endpoint)
            try uvCheck(uv_listen(listener.stream, backlog, Trampolines.connectionArrived))
            listener.delegate = delegate
            return listener
        } catch {
            listener.close(removingSocketFile: false)
            throw error
        }
    }

    /// Binds the handle and returns the address actually bound.
    private func bind(_ endpoint: Endpoint) throws(UVError) -> Endpoint {
        switch endpoint {
        case .tcp(let host, let port):
            let tcp = UnsafeMutableRawPointer(stream).assumingMemoryBound(to: uv_tcp_t.self)
            try SocketAddress.withSockaddr(host: host, port: port) { (address) throws(UVError) in
                try uvCheck(uv_tcp_bind(tcp, address, 0))
            }
            return try SocketAddress.endpoint { uv_tcp_getsockname(tcp, $0, $1) }
        case .unix(let path):
            let pipe = UnsafeMutableRawPointer(stream).assumingMemoryBound(to: uv_pipe_t.self)
            try uvCheck(uv_pipe_bind(pipe, path))
            return endpoint
        }
    }

    /// Called by libuv when a peer is waiting to be accepted (or accepting failed).
    func connectionArrived(status: Int32) {
        guard !lifecycle.isClosing else { return }
        guard status >= 0 else {
            delegate?.listener(self, didFailToAccept: UVError(code: status))
            return
        }
        let connection = Connection(loop: loop, kind: kind)
        do {
            try uvCheck(uv_accept(stream, connection.stream))
        } catch {
            connection.close(error: error)
            delegate?.listener(self, didFailToAccept: error)
            return
        }
        connection.disableNagle()
        delegate?.listener(self, didAccept: connection)
    }

    /// Stops listening and closes the socket; idempotent.
    public func close() {
        close(removingSocketFile: true)
    }

    private func close(removingSocketFile: Bool) {
        guard !lifecycle.isClosing, !lifecycle.isClosed else { return }
        if removingSocketFile, case .unix(let path) = endpoint {
            unlink(path)
        }
        lifecycle.close(stream.asHandle, on: loop)
    }
}

extension Listener: HandleOwner {
    func handleDidClose() {
        let retained: UnsafeMutableRawPointer?
        switch kind {
        case .tcp: retained = lifecycle.finish(UnsafeMutableRawPointer(stream).assumingMemoryBound(to: uv_tcp_t.self))
        case .unix: retained = lifecycle.finish(UnsafeMutableRawPointer(stream).assumingMemoryBound(to: uv_pipe_t.self))
        }
        delegate = nil
        releaseOwner(retained)
    }
}
