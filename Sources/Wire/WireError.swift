/// A violation of the framing found by ``FrameDecoder``. Each case is a distinct, documented fault;
/// after any of them the byte stream cannot be trusted and the connection should be closed (after a
/// GOAWAY naming the error, if the peer can still read).
public enum WireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The first bytes are not the protocol's magic (``Preface/magic``): not one of our peers.
    case badMagic
    /// The preface names a protocol version this side does not speak.
    case unsupportedVersion(UInt16)
    /// A header announced a payload above the receiver's limit; nothing of it was buffered.
    case frameTooLarge(limit: Int, actual: Int)
    /// The type byte names no frame type.
    case unknownFrameType(UInt8)
    /// A call frame arrived on stream 0.
    case missingStreamID(FrameType)
    /// A connection frame arrived on a stream other than 0.
    case unexpectedStreamID(FrameType, StreamID)
    /// A frame whose payload has a fixed size (or a multiple of one) had another length.
    case invalidPayloadLength(FrameType, Int)
    /// A length inside the payload points past its end.
    case truncatedPayload(FrameType)
    /// Bytes remain after every field of the payload was read.
    case trailingBytes(FrameType, count: Int)
    /// A text field (method name, metadata key, status message) is not valid UTF-8.
    case invalidUTF8(FrameType)
    /// A setting's value is outside its allowed range (see ``SettingID``).
    case invalidSettingValue(SettingID, UInt32)
    /// A credit frame granted zero messages.
    case zeroCreditIncrement(StreamID)
    /// The input ended in the middle of a frame (or the preface).
    case truncatedFrame(bufferedBytes: Int)
    /// The protocol's magic arrived where a frame header belongs: the peer sent its preface twice.
    case secondPreface

    public var description: String {
        switch self {
        case .badMagic: "bad magic: the peer does not speak this protocol"
        case .unsupportedVersion(let version): "unsupported protocol version \(version)"
        case .frameTooLarge(let limit, let actual): "frame payload of \(actual) bytes exceeds the limit of \(limit)"
        case .unknownFrameType(let type): "unknown frame type 0x\(String(type, radix: 16))"
        case .missingStreamID(let type): "\(type) frame on stream 0"
        case .unexpectedStreamID(let type, let stream): "\(type) frame on \(stream), expected stream 0"
        case .invalidPayloadLength(let type, let length): "\(type) frame with invalid payload length \(length)"
        case .truncatedPayload(let type): "\(type) frame payload is truncated"
        case .trailingBytes(let type, let count): "\(type) frame has \(count) unexpected trailing bytes"
        case .invalidUTF8(let type): "\(type) frame carries text that is not valid UTF-8"
        case .invalidSettingValue(let id, let value): "setting \(id) has invalid value \(value)"
        case .zeroCreditIncrement(let stream): "credit frame on \(stream) grants nothing"
        case .truncatedFrame(let count): "input ended inside a frame (\(count) bytes buffered)"
        case .secondPreface: "a second preface: the preface is sent once, before the first frame"
        }
    }
}
