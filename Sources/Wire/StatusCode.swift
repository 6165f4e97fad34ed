/// The outcome of a call, carried by every `FrameType.callEnd` frame and by `FrameType.goAway`.
///
/// The numbers are gRPC's and are part of the protocol. An unknown number received from a peer is kept
/// as is (``description`` shows it); treat it like ``unknown``.
public struct StatusCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The call succeeded.
    public static let ok = StatusCode(rawValue: 0)
    /// The client cancelled the call.
    public static let cancelled = StatusCode(rawValue: 1)
    /// An error with no better code, including an unknown code from a peer.
    public static let unknown = StatusCode(rawValue: 2)
    /// The request is wrong whatever the server's state: undecodable message, bad name, out-of-range value.
    public static let invalidArgument = StatusCode(rawValue: 3)
    /// The deadline passed before the call completed.
    public static let deadlineExceeded = StatusCode(rawValue: 4)
    /// The named object does not exist, or the caller may not know that it exists.
    public static let notFound = StatusCode(rawValue: 5)
    /// The object the call would create already exists (or its name collides).
    public static let alreadyExists = StatusCode(rawValue: 6)
    /// The caller is known but lacks the right to do this.
    public static let permissionDenied = StatusCode(rawValue: 7)
    /// A limit was hit: frame size, streams per connection, connections, outbound buffer.
    public static let resourceExhausted = StatusCode(rawValue: 8)
    /// The system is not in a state that allows the call (e.g. executing an action set already running).
    public static let failedPrecondition = StatusCode(rawValue: 9)
    /// The call conflicted with a concurrent one; retry at a higher level.
    public static let aborted = StatusCode(rawValue: 10)
    /// A value is outside a valid range that depends on state (e.g. a fire date too far away).
    public static let outOfRange = StatusCode(rawValue: 11)
    /// The method is not implemented by this server.
    public static let unimplemented = StatusCode(rawValue: 12)
    /// A server bug or broken invariant.
    public static let `internal` = StatusCode(rawValue: 13)
    /// The service cannot take the call now (draining, accessory unreachable); retrying may work.
    public static let unavailable = StatusCode(rawValue: 14)
    /// Data was lost or corrupted.
    public static let dataLoss = StatusCode(rawValue: 15)
    /// The call has no valid credential: the connection has not authenticated.
    public static let unauthenticated = StatusCode(rawValue: 16)

    /// Every code defined above, in numeric order.
    public static let allDefined: [StatusCode] = (0...16).map { StatusCode(rawValue: $0) }

    /// gRPC's name for the code, e.g. `UNAVAILABLE`; `CODE_n` for a number gRPC does not define.
    public var name: String {
        switch rawValue {
        case 0: "OK"
        case 1: "CANCELLED"
        case 2: "UNKNOWN"
        case 3: "INVALID_ARGUMENT"
        case 4: "DEADLINE_EXCEEDED"
        case 5: "NOT_FOUND"
        case 6: "ALREADY_EXISTS"
        case 7: "PERMISSION_DENIED"
        case 8: "RESOURCE_EXHAUSTED"
        case 9: "FAILED_PRECONDITION"
        case 10: "ABORTED"
        case 11: "OUT_OF_RANGE"
        case 12: "UNIMPLEMENTED"
        case 13: "INTERNAL"
        case 14: "UNAVAILABLE"
        case 15: "DATA_LOSS"
        case 16: "UNAUTHENTICATED"
        default: "CODE_\(rawValue)"
        }
    }

    public var description: String { "\(name) (\(rawValue))" }
}
