import CLibUV

/// A failure reported by libuv, with its error code (a negated errno on Unix).
///
/// Created only inside this module, through `uvCheck(_:)`; the name and message come from libuv.
public struct UVError: Error, Hashable, Sendable, CustomStringConvertible {
    /// libuv's error code, e.g. `UV_ECONNREFUSED`.
    public let code: Int32

    init(code: Int32) {
        self.code = code
    }

    /// libuv's symbolic name, e.g. `ECONNREFUSED`.
    public var name: String { String(cString: uv_err_name(code)) }
    /// libuv's human-readable message, e.g. `connection refused`.
    public var message: String { String(cString: uv_strerror(code)) }
    public var description: String { "\(name): \(message)" }

    /// The peer closed its side of the connection.
    public static let endOfFile = UVError(code: UV_EOF.rawValue)
    /// The peer reset the connection.
    public static let connectionReset = UVError(code: UV_ECONNRESET.rawValue)
    /// Nobody listens at the address.
    public static let connectionRefused = UVError(code: UV_ECONNREFUSED.rawValue)
    /// The address is taken by another listener.
    public static let addressInUse = UVError(code: UV_EADDRINUSE.rawValue)
    /// A write would take the connection's queued outbound bytes over its cap.
    public static let noBufferSpace = UVError(code: UV_ENOBUFS.rawValue)
    /// The connection is closing or closed.
    public static let notConnected = UVError(code: UV_ENOTCONN.rawValue)
    /// An argument libuv refused, such as a host that is not an IP address.
    public static let invalidArgument = UVError(code: UV_EINVAL.rawValue)
    /// The operation was cancelled because its handle closed.
    public static let cancelled = UVError(code: UV_ECANCELED.rawValue)
    /// The connection's security layer failed (``Connection/securityFailure`` says how).
    public static let securityFailed = UVError(code: UV_EPROTO.rawValue)
    /// The connection was aborted locally.
    public static let connectionAborted = UVError(code: UV_ECONNABORTED.rawValue)
}

/// Returns `result` when libuv reports success (>= 0), throws it as a ``UVError`` otherwise.
@discardableResult
func uvCheck(_ result: Int32) throws(UVError) -> Int32 {
    guard result >= 0 else { throw UVError(code: result) }
    return result
}
