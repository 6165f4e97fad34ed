import HomeService

/// The request shape of the API's most frequent calls, read straight from its bytes by their
/// shortcuts: 16-byte ids in fields 1, 2, 3... in that order, then at most one
/// `home.v1.CharacteristicValue` holding one bool, signed integer or double.
///
/// swift-protobuf decodes each `bytes` field into a Foundation `Data` (a 16-byte id is too long for
/// its inline form) and each value into a nested message: heap objects whose creation and release
/// cost more than a cached read, and a fifth of a store write, under callgrind. These functions
/// accept only the shape every encoder writes (each field once, in order, tags and lengths in one
/// byte) and return `nil` for anything else, which the generated decoder then reads.
enum RequestBytes {
    /// Bytes of one leading id field: its tag, the length 16, the id.
    static let idFieldLength = 18

    /// The id in `field` (1 to 15), when it is the `field`th of the leading ids.
    ///
    /// Always inlined: called with a constant `field`, its checks fold into two compares and four
    /// loads (a call per id cost a cached read 130 instructions more).
    @inline(__always)
    static func leadingID(_ bytes: ArraySlice<UInt8>, field: Int) -> UniqueIdentifier? {
        let offset = (field - 1) * idFieldLength
        guard bytes.count >= offset + idFieldLength else { return nil }
        let raw = bytes.span.bytes
        // Tag (field number, wire type 2) then length 16, little-endian: `0A 10` for field 1.
        guard raw.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt16.self) == UInt16(16 << 8 | field << 3 | 2)
        else { return nil }
        return id(in: raw, at: offset + 2)
    }

    /// The 16-byte id at `offset` of `raw`, in two loads. The loads are bounds-checked and hold no
    /// pointer, and any bit pattern is a valid integer: safe despite their name.
    @inline(__always)
    static func id(in raw: RawSpan, at offset: Int) -> UniqueIdentifier {
        UniqueIdentifier(
            high: UInt64(bigEndian: raw.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self)),
            low: UInt64(bigEndian: raw.unsafeLoadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
        )
    }

    /// The value in `field`, right after `idCount` leading ids and filling the rest of `bytes`.
    /// Always inlined, as ``leadingID(_:field:)``: a call cost the forwarded write 130 instructions.
    @inline(__always)
    static func trailingValue(_ bytes: ArraySlice<UInt8>, field: Int, after idCount: Int) -> CharacteristicValue? {
        let rest = bytes.dropFirst(idCount * idFieldLength)
        // The tag, the value's length, then the value message.
        guard rest.count >= 3, rest.first == UInt8(field << 3 | 2), Int(rest[rest.startIndex + 1]) == rest.count - 2
        else { return nil }
        return value(rest.dropFirst(2))
    }

    /// A `home.v1.CharacteristicValue` of exactly one bool, signed or float field.
    private static func value(_ message: ArraySlice<UInt8>) -> CharacteristicValue? {
        guard let tag = message.first else { return nil }
        let payload = message.dropFirst()
        switch tag {
        case 0x08:  // bool_value
            guard payload.count == 1, payload.first! <= 1 else { return nil }
            return .bool(payload.first! == 1)
        case 0x10:  // signed_value
            return shortestVarint(payload).map { .int(Int64(bitPattern: $0)) }
        case 0x21:  // float_value: eight bytes, least significant first
            guard payload.count == 8 else { return nil }
            let bits = payload.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .float(Double(bitPattern: bits))
        default:
            return nil
        }
    }

    /// The varint that is all of `bytes`, if it is written in the fewest bytes (the way every
    /// encoder writes it; a padded one goes to the generated decoder).
    private static func shortestVarint(_ bytes: ArraySlice<UInt8>) -> UInt64? {
        guard let last = bytes.last, (1...10).contains(bytes.count), last & 0x80 == 0,
            last != 0 || bytes.count == 1, bytes.count < 10 || last == 1
        else { return nil }
        var value: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            guard index == bytes.count - 1 || byte & 0x80 != 0 else { return nil }
            value |= UInt64(byte & 0x7F) << (7 * UInt64(index))
        }
        return value
    }

    /// The home id a request names in field 1 (`home_id`), wherever the field lies and however
    /// often it comes (the last wins, as in protobuf); `nil` if it is absent, not 16 bytes, or the
    /// bytes are not protobuf (the handler's decoder then says what is wrong).
    /// Every field is read, even when the request begins with the id: a second `home_id` after it
    /// is the one the handler acts on, so it must be the one checked.
    static func homeID(in bytes: ArraySlice<UInt8>) -> HomeID? {
        let span = bytes.span
        let raw = span.bytes
        var found: HomeID?
        var index = 0
        while index < span.count {
            // The usual field first, in one load: a one-byte tag of a length-delimited field and a
            // one-byte length (every id, name and small message the API's requests carry). The
            // general decoding below took more than the rest of a cached read's check.
            if index + 2 <= span.count {
                let tagAndLength = raw.unsafeLoadUnaligned(fromByteOffset: index, as: UInt16.self)
                if tagAndLength & 0x8087 == 2 {
                    let (length, start) = (Int(tagAndLength >> 8), index + 2)
                    guard length <= span.count - start else { return nil }
                    if tagAndLength & 0xFF == 1 << 3 | 2 {
                        guard length == 16 else { return nil }
                        found = HomeID(id(in: raw, at: start))
                    }
                    index = start + length
                    continue
                }
            }
            guard let (key, afterKey) = varint(span, at: index) else { return nil }
            index = afterKey
            switch key & 7 {
            case 0:
                guard let (_, next) = varint(span, at: index) else { return nil }
                index = next
            case 1: index += 8
            case 5: index += 4
            case 2:
                guard let (length, start) = varint(span, at: index), length <= UInt64(span.count - start) else {
                    return nil
                }
                if key >> 3 == 1 {
                    guard length == 16 else { return nil }
                    found = HomeID(id(in: span.bytes, at: start))
                }
                index = start + Int(length)
            default:
                return nil
            }
        }
        return index == span.count ? found : nil
    }

    /// The varint at `index` and the index after it; `nil` if it runs past the end or past 10 bytes.
    private static func varint(_ span: Span<UInt8>, at index: Int) -> (UInt64, Int)? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var index = index
        while index < span.count, shift < 64 {
            let byte = span[index]
            index += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return (value, index) }
            shift += 7
        }
        return nil
    }
}
