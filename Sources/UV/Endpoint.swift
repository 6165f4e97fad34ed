/// An address to listen on or connect to.
public enum Endpoint: Hashable, Sendable, CustomStringConvertible {
    /// An IPv4 or IPv6 address literal (`127.0.0.1`, `::1`, `0.0.0.0`) and a port; port 0 asks the
    /// system for a free one when listening.
    case tcp(host: String, port: Int)
    /// A Unix-domain socket path.
    case unix(path: String)

    /// Parses `HOST:PORT` (`127.0.0.1:7420`, `[::1]:7420`) or `unix:PATH`, as command lines take them.
    /// - Returns: `nil` if `text` is neither.
    public init?(parsing text: String) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst("unix:".count))
            guard !path.isEmpty else { return nil }
            self = .unix(path: path)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = text[..<colon]
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { return nil }
        self = .tcp(host: String(host), port: port)
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }
}
