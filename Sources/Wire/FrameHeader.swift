/// The fixed header in front of every frame after the connection preface.
///
/// All integers on the wire are big-endian (network order).
///
/// | offset | size | field          | meaning                                                          |
/// |-------:|-----:|----------------|------------------------------------------------------------------|
/// |      0 |    4 | payload length | bytes after the header; checked against the receiver's limit     |
/// |      4 |    1 | type           | ``FrameType``; unknown types are a protocol error                |
/// |      5 |    1 | flags          | per-type bits (``FrameFlags``); undefined bits are sent as 0 and |
/// |        |      |                | ignored on receipt                                               |
/// |      6 |    4 | stream id      | 0 for connection frames, the call's id for call frames           |
///
/// The payload layout of each type is documented on ``Frame`` and in docs/PROTOCOL.md.
public struct FrameHeader: Hashable, Sendable {
    /// Bytes in the header.
    public static let length = 10

    /// Bytes after the header.
    public var payloadLength: UInt32
    /// The raw type byte (validated by the decoder before a `FrameHeader` is exposed).
    public var type: FrameType
    public var flags: FrameFlags
    public var streamID: StreamID

    public init(payloadLength: UInt32, type: FrameType, flags: FrameFlags, streamID: StreamID) {
        self.payloadLength = payloadLength
        self.type = type
        self.flags = flags
        self.streamID = streamID
    }
}

extension FrameHeader {
    /// Appends the header's ten bytes to `buffer`, in one append (ten single-byte appends each
    /// checked the array's capacity and uniqueness: a visible share of a call in profiles).
    func write(to buffer: inout [UInt8]) {
        let first8 =
            UInt64(payloadLength) << 32 | UInt64(type.rawValue) << 24 | UInt64(flags.rawValue) << 16
            | UInt64(streamID.rawValue >> 16)
        let last2 = UInt16(truncatingIfNeeded: streamID.rawValue)
        // A (UInt64, UInt16) tuple is laid out as its ten bytes in order (its size is 10; a slice
        // of the bytes would be copied through an iterator instead of at once).
        buffer.appendBytes(of: (first8.bigEndian, last2.bigEndian))
    }
}
