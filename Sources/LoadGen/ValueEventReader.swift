/// Reads the integer value of a `home.v1.Event` carrying `characteristic_value_updated`, walking the
/// protobuf fields by hand. A subscriber of the fan-out benchmark receives hundreds of thousands of
/// events a second; decoding each whole with swift-protobuf took 40% of the client's core and made
/// the client, not the server, the limit (its Redis side only splits RESP lines).
enum ValueEventReader {
    /// `Event.characteristic_value_updated`, `CharacteristicValueUpdated.value`, and the integer
    /// fields of `CharacteristicValue` (proto/home/v1/events.proto and model.proto).
    static let valueUpdatedField: UInt64 = 157
    static let valueField: UInt64 = 4
    static let signedValueField: UInt64 = 2
    static let unsignedValueField: UInt64 = 3

    /// The value, or `nil` when the event is malformed or is not an integer value update.
    static func integerValue(in event: [UInt8]) -> UInt64? {
        event.withUnsafeBufferPointer { bytes in
            guard let update = field(valueUpdatedField, in: bytes[...]),
                let value = field(valueField, in: update)
            else { return nil }
            var reader = FieldReader(value)
            while let (number, wireType) = reader.nextKey() {
                if wireType == 0, number == signedValueField || number == unsignedValueField {
                    return reader.varint()
                }
                guard reader.skip(wireType) else { return nil }
            }
            return nil
        }
    }

    /// The contents of the last length-delimited field `number` (protobuf merges repeated
    /// occurrences of a message; the benchmark's events have one).
    private static func field(
        _ number: UInt64,
        in bytes: Slice<UnsafeBufferPointer<UInt8>>
    )
        -> Slice<UnsafeBufferPointer<UInt8>>?
    {
        var reader = FieldReader(bytes)
        var found: Slice<UnsafeBufferPointer<UInt8>>?
        while let (fieldNumber, wireType) = reader.nextKey() {
            if fieldNumber == number, wireType == 2 {
                guard let contents = reader.lengthDelimited() else { return nil }
                found = contents
            } else if !reader.skip(wireType) {
                return nil
            }
        }
        return reader.isMalformed ? nil : found
    }
}

/// A cursor over protobuf's binary encoding: keys, varints, and skipping fields.
private struct FieldReader {
    private let bytes: Slice<UnsafeBufferPointer<UInt8>>
    private var index: Int
    private(set) var isMalformed = false

    init(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    /// The next field's number and wire type; `nil` at the end or on a malformed key.
    mutating func nextKey() -> (UInt64, UInt64)? {
        guard index < bytes.endIndex else { return nil }
        guard let key = varint(), key >> 3 != 0 else {
            isMalformed = true
            return nil
        }
        return (key >> 3, key & 7)
    }

    mutating func varint() -> UInt64? {
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

    mutating func lengthDelimited() -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard let length = varint(), length <= UInt64(bytes.endIndex - index) else {
            isMalformed = true
            return nil
        }
        let start = index
        index += Int(length)
        return bytes[start..<index]
    }

    /// Skips a field's value; `false` for an unknown or truncated one.
    mutating func skip(_ wireType: UInt64) -> Bool {
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
