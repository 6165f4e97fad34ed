/// An address to listen on or connect to.
public enum Endpoint: Hashable, Sendable, CustomStringConvertible {
    /// An IPv4 or IPv6 address literal (`127.0.0.1`, `::1`, `0.0.0.0`) and a port; port 0 asks the
    /// system for a free one when listening.
    case tcp(host: String, port: Int)
    /// A Unix-domain socket path.
    case unix(path: String)

    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }
}
