import CLibUV
import Glibc

/// Conversions between ``Endpoint`` and the C socket address structs libuv takes.
enum SocketAddress {
    /// Calls `body` with a `sockaddr` for an IP literal and port.
    /// - Throws: `UVError` (`EINVAL`) if the host is not an IPv4 or IPv6 literal or the port is out of range.
    @discardableResult
    static func withSockaddr<Result>(
        host: String,
        port: Int,
        _ body: (UnsafePointer<sockaddr>) throws(UVError) -> Result
    ) throws(UVError) -> Result {
        guard (0...65535).contains(port) else { throw .invalidArgument }
        var storage = sockaddr_storage()
        return try withUnsafeMutableBytes(of: &storage) { (raw) throws(UVError) -> Result in
            if host.contains(":") {
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                try uvCheck(uv_ip6_addr(host, Int32(port), address))
            } else {
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                try uvCheck(uv_ip4_addr(host, Int32(port), address))
            }
            return try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
    }

    /// The endpoint that `fill` writes into a `sockaddr_storage` (as `uv_tcp_getsockname` does).
    static func endpoint(
        _ fill: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<Int32>) -> Int32
    ) throws(UVError) -> Endpoint {
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        return try withUnsafeMutableBytes(of: &storage) { (raw) throws(UVError) -> Endpoint in
            let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr.self)
            try uvCheck(fill(address, &length))
            var name = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                let v4 = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                try uvCheck(uv_ip4_name(v4, &name, name.count))
                return .tcp(host: Self.string(from: name), port: Int(UInt16(bigEndian: v4.pointee.sin_port)))
            case AF_INET6:
                let v6 = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                try uvCheck(uv_ip6_name(v6, &name, name.count))
                return .tcp(host: Self.string(from: name), port: Int(UInt16(bigEndian: v6.pointee.sin6_port)))
            default:
                throw .invalidArgument
            }
        }
    }

    private static func string(from cString: [CChar]) -> String {
        let bytes = cString.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
