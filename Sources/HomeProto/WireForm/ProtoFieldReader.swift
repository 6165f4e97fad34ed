/// A cursor over protobuf's binary encoding: keys, varints, fixed-width and length-delimited
/// values, and skipping fields. The hand-written readers of the hottest messages walk their bytes
/// with it (see ``Home_V1_LinkMessage/init(linkBytes:)``); everything else goes through the
/// generated decoders.
public struct ProtoFieldReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int
    /// Whether a key, a varint or a length ran past the end, or a wire type is unknown.
    public private(set) var isMalformed = false

    /// A reader at the start of a message's bytes.
    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { index >= bytes.endIndex }

    /// The next field's number and wire type; `nil` at the end or on a malformed key.
    public mutating func nextKey() -> (number: UInt64, wireType: UInt64)? {
        guard index < bytes.endIndex else { return nil }
        guard let key = varint(), key >> 3 != 0 else {
            isMalformed = true
            return nil
        }
        return (key >> 3, key & 7)
    }

    /// The varint at the current position; `nil` (and ``isMalformed``) when it runs past the end.
    public mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.endIndex, shift < 64 {
            let byte = bytes[index]
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        isMalformed = true
        return nil
    }

    /// Eight bytes, least significant first (wire type 1).
    public mutating func fixed64() -> UInt64? {
        guard bytes.endIndex - index >= 8 else {
            isMalformed = true
            return nil
        }
        var value: UInt64 = 0
        for offset in (0..<8).reversed() { value = value << 8 | UInt64(bytes[index + offset]) }
        index += 8
        return value
    }

    /// A length-delimited value (wire type 2): a string, bytes or a nested message.
    public mutating func lengthDelimited() -> ArraySlice<UInt8>? {
        guard let length = varint(), length <= UInt64(bytes.endIndex - index) else {
            isMalformed = true
            return nil
        }
        let start = index
        index += Int(length)
        return bytes[start..<index]
    }

    /// Skips a field's value; `false` for an unknown wire type or a truncated value.
    public mutating func skip(_ wireType: UInt64) -> Bool {
        switch wireType {
        case 0: return varint() != nil
        case 1: return advance(8)
        case 2: return lengthDelimited() != nil
        case 5: return advance(4)
        default:
            isMalformed = true
            return false
        }
    }

    private mutating func advance(_ count: Int) -> Bool {
        guard bytes.endIndex - index >= count else {
            isMalformed = true
            return false
        }
        index += count
        return true
    }
}
