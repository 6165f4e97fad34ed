public import UV

/// Serves `GET /metrics` over HTTP/1.1 on its own port, on the server's loop: the body is rendered
/// when a scrape asks (Prometheus's text exposition format), from counters the server keeps anyway.
/// Nothing else is served: another path gets 404, another method 405, anything that is not an HTTP
/// request head 400. Every answer closes its connection (a scrape every few seconds does not need
/// keep-alive), and a peer that has not sent its request head within ``headTimeout``, or not read
/// the answer within ``answerTimeout``, is cut off; at most ``maxConnections`` are open at once.
public final class MetricsEndpoint: ListenerDelegate {
    /// The longest a request head may be.
    public static let maxHeadBytes = 8 * 1024
    public static let headTimeout = Duration.seconds(5)
    public static let answerTimeout = Duration.seconds(10)
    public static let maxConnections = 64

    private let loop: EventLoop
    private let render: () -> [UInt8]
    private var listener: Listener?
    /// The connections open now, to close with the endpoint.
    private var open: [ObjectIdentifier: Connection] = [:]

    /// - Parameter render: the body of an answer to `GET /metrics`.
    public init(loop: EventLoop, render: @escaping () -> [UInt8]) {
        self.loop = loop
        self.render = render
    }

    /// Listens on `endpoint`; returns the bound one (its port, for port 0).
    public func listen(on endpoint: Endpoint) throws(UVError) -> Endpoint {
        let listener = try Listener.listen(on: endpoint, loop: loop, backlog: 64, delegate: self)
        self.listener = listener
        return listener.endpoint
    }

    /// Stops listening and closes the connections still open (a scrape in flight as the server stops).
    public func close() {
        listener?.close()
        listener = nil
        for connection in Array(open.values) { connection.close() }
    }

    public func listener(_ listener: Listener, didAccept connection: Connection) {
        guard open.count < Self.maxConnections else {
            connection.close()
            return
        }
        let exchange = MetricsExchange(endpoint: self, connection: connection, loop: loop)
        open[ObjectIdentifier(exchange)] = connection
        connection.delegate = exchange
        do {
            try connection.startReading()
        } catch {
            connection.close()
        }
    }

    public func listener(_ listener: Listener, didFailToAccept error: UVError) {}

    fileprivate func answer(to head: HTTPRequestHead) -> (status: String, headers: String, body: [UInt8]) {
        guard head.method == "GET" else {
            return ("405 Method Not Allowed", "Allow: GET\r\n", Array("only GET /metrics is served\n".utf8))
        }
        guard head.path == "/metrics" else {
            return ("404 Not Found", "", Array("only GET /metrics is served\n".utf8))
        }
        return ("200 OK", "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n", render())
    }

    fileprivate func closed(_ exchange: MetricsExchange) {
        open[ObjectIdentifier(exchange)] = nil
    }
}

/// A request head's first line: `GET /metrics HTTP/1.1`.
struct HTTPRequestHead: Equatable {
    let method: String
    /// The target without its query.
    let path: String

    /// The head in `bytes` once it is complete (ends with an empty line): `.some(nil)` for one that
    /// is not HTTP/1.x, `nil` while it is still arriving.
    static func parse(_ bytes: [UInt8]) -> HTTPRequestHead?? {
        guard let end = firstIndex(of: [13, 10, 13, 10], in: bytes) else { return nil }
        let lineEnd = firstIndex(of: [13, 10], in: bytes) ?? end
        let words = bytes[..<lineEnd].split(separator: 32, omittingEmptySubsequences: false)
        guard words.count == 3, let version = String(validating: words[2], as: UTF8.self),
            version == "HTTP/1.1" || version == "HTTP/1.0",
            let method = String(validating: words[0], as: UTF8.self), !method.isEmpty,
            let target = String(validating: words[1], as: UTF8.self), target.hasPrefix("/")
        else { return .some(nil) }
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
        return HTTPRequestHead(method: method, path: path ?? target)
    }

    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

/// One connection to the metrics port: its request head, then the answer, then the close.
private final class MetricsExchange: ConnectionDelegate {
    private unowned let endpoint: MetricsEndpoint
    private let timer: LoopTimer
    private var head: [UInt8] = []
    private var answered = false

    init(endpoint: MetricsEndpoint, connection: Connection, loop: EventLoop) {
        self.endpoint = endpoint
        timer = LoopTimer(loop: loop)
        timer.start(after: MetricsEndpoint.headTimeout) { [unowned connection] in connection.close() }
    }

    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        guard !answered else { return }  // what follows the head (a body, a pipelined request) is ignored
        for index in 0..<bytes.count { head.append(bytes[index]) }
        guard head.count <= MetricsEndpoint.maxHeadBytes else {
            reply(on: connection, ("431 Request Header Fields Too Large", "", Array("request head too large\n".utf8)))
            return
        }
        switch HTTPRequestHead.parse(head) {
        case nil:
            return
        case .some(nil):
            reply(on: connection, ("400 Bad Request", "", Array("not an HTTP/1.1 request\n".utf8)))
        case .some(let request?):
            reply(on: connection, endpoint.answer(to: request))
        }
    }

    private func reply(on connection: Connection, _ answer: (status: String, headers: String, body: [UInt8])) {
        answered = true
        head = []
        connection.stopReading()
        let headers =
            "HTTP/1.1 \(answer.status)\r\n\(answer.headers)Content-Length: \(answer.body.count)\r\nConnection: close\r\n\r\n"
        do {
            try connection.write(Array(headers.utf8) + answer.body)
        } catch {
            connection.close()
            return
        }
        // A peer that does not read its answer is cut off all the same.
        timer.start(after: MetricsEndpoint.answerTimeout) { [unowned connection] in connection.close() }
        connection.closeWhenWritesFlushed()
    }

    func connectionDidClose(_ connection: Connection, error: UVError?) {
        timer.close()
        endpoint.closed(self)
    }
}
