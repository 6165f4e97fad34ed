/// The type byte of a frame. The numbering is part of the protocol: never reuse a value.
public enum FrameType: UInt8, CaseIterable, Hashable, Sendable {
    /// Connection parameters (stream 0); each side sends one right after its preface.
    case settings = 0x01
    /// Opens a call: method name, timeout and metadata (client to server, new stream id).
    case callStart = 0x02
    /// One protobuf message of a call, in either direction.
    case message = 0x03
    /// Ends a call with its status (server to client).
    case callEnd = 0x04
    /// Abandons a call (client to server); the server stops work and sends nothing more for it.
    case cancel = 0x05
    /// Grants the sender of a server stream permission to send more messages.
    case credit = 0x06
    /// Liveness probe (stream 0); answered with ``pong`` carrying the same 8 bytes.
    case ping = 0x07
    /// Answer to ``ping`` (stream 0).
    case pong = 0x08
    /// The sender accepts no stream above the given id and will close (stream 0).
    case goAway = 0x09

    /// The type's name in docs/PROTOCOL.md (`CALL_START`), for messages to people.
    public var name: String {
        switch self {
        case .settings: "SETTINGS"
        case .callStart: "CALL_START"
        case .message: "MESSAGE"
        case .callEnd: "CALL_END"
        case .cancel: "CANCEL"
        case .credit: "CREDIT"
        case .ping: "PING"
        case .pong: "PONG"
        case .goAway: "GOAWAY"
        }
    }

    /// Whether frames of this type belong to the connection (stream id 0) rather than a call.
    public var isConnectionFrame: Bool {
        switch self {
        case .settings, .ping, .pong, .goAway: true
        case .callStart, .message, .callEnd, .cancel, .credit: false
        }
    }
}

/// Per-type flag bits of the frame header.
public struct FrameFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// On ``FrameType/message``: the sender sends no more messages on this stream.
    public static let endStream = FrameFlags(rawValue: 0x01)
    /// On ``FrameType/callEnd``: the call did not run and may safely be retried (for example during drain).
    public static let retryable = FrameFlags(rawValue: 0x01)
}

/// Identifies a call on a connection. Zero is the connection itself.
public struct StreamID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    /// Stream 0: frames about the connection as a whole.
    public static let connection = StreamID(0)

    public static func < (lhs: StreamID, rhs: StreamID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "stream \(rawValue)" }
}

extension StreamID {
    /// Dictionaries keyed by stream id (a client's calls in flight) hash it with one keyed multiply
    /// instead of SipHash through `Hasher`, which took a tenth of a pipelining client's time; the
    /// key is drawn per process, so a peer choosing ids cannot aim them at one bucket without it.
    @inlinable
    public func _rawHashValue(seed: Int) -> Int {
        let mixed = (UInt64(rawValue) ^ UInt64(UInt(bitPattern: seed)) ^ Self.hashKeys.0)
            .multipliedFullWidth(by: Self.hashKeys.1)
        return Int(truncatingIfNeeded: mixed.high ^ mixed.low)
    }

    @usableFromInline
    static let hashKeys: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        // Odd, so that the multiply loses no bits.
        return (generator.next(), generator.next() | 1)
    }()
}
