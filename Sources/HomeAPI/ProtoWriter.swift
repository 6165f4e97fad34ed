import HomeService
import Wire

/// Protobuf's binary encoding written by hand, for the few messages on hot paths whose generated
/// encoder costs more than the work around them: swift-protobuf sizes and writes a message in two
/// generic passes and sizes each nested message again at every level above it. Each message written
/// here has a test that compares its bytes with the generated encoder's.
///
/// A message is sized first (the `…Length` functions), then written into exactly that room through
/// an `OutputSpan` (the field writers below): one capacity check for the message instead of one per
/// byte, and every byte still bounds-checked, so a wrong size traps instead of writing past it.
/// Fields are written in field-number order, as the generated code does; a caller leaves a field
/// out at its proto3 default (a member of a oneof is written whenever it is set).
enum ProtoWriter {
    // The sizing functions are always inlined: a call for a constant field number cost more than
    // the arithmetic it does, and sizing runs before every hand-written message.

    /// A message of exactly `length` bytes, written by `body`.
    ///
    /// Appended to an empty array rather than made by `Array(capacity:initializingWith:)`: that
    /// initializer reaches the unspecialized buffer allocation, which looks up the storage class's
    /// generic metadata at every call (about 330 instructions more per message under callgrind).
    /// - Parameter bytes: an empty array to write into, which may have room already (one of
    ///   ``AnswerBuffers``).
    static func message(
        length: Int,
        into bytes: consuming [UInt8] = [],
        _ body: (inout OutputSpan<UInt8>) -> Void
    ) -> [UInt8] {
        precondition(bytes.isEmpty, "a message is written into an empty array")
        bytes.append(addingCapacity: length) { body(&$0) }
        precondition(bytes.count == length, "a message sized \(length) bytes wrote \(bytes.count)")
        return bytes
    }

    /// A message that carries another as its last field: its other fields, encoded, and that
    /// field's number (a response that carries the object a call changed, an event its home).
    typealias Carrier = (head: [UInt8], field: UInt32)

    /// A message of exactly `length` bytes, which `write` appends, inside `carriers` (outermost
    /// first; none: the message alone): each carrier's other fields, then the tag and length of the
    /// field holding the next, all in one array of the final size.
    static func carried(_ length: Int, in carriers: [Carrier], _ write: (inout [UInt8]) -> Void) -> [UInt8] {
        let total = carriedLength(length, in: carriers[...])
        var bytes: [UInt8] = []
        bytes.reserveCapacity(total)
        for index in carriers.indices {
            let carrier = carriers[index]
            // What the carrier's field holds: everything inside it (at most a few carriers: sizing
            // them again costs less than an array of their lengths).
            let contentLength = carriedLength(length, in: carriers[(index + 1)...])
            bytes += carrier.head
            let headerLength = delimitedLength(contentLength, field: carrier.field) - contentLength
            bytes.append(addingCapacity: headerLength) { $0.delimited(carrier.field, length: contentLength) }
        }
        write(&bytes)
        precondition(bytes.count == total, "a message sized \(total) bytes wrote \(bytes.count)")
        return bytes
    }

    /// Bytes of a message of `length` bytes inside `carriers`.
    private static func carriedLength(_ length: Int, in carriers: ArraySlice<Carrier>) -> Int {
        carriers.reversed().reduce(length) { $1.head.count + delimitedLength($0, field: $1.field) }
    }

    /// Bytes of a `string` field, none when empty (proto3 leaves it out).
    @inline(__always)
    static func stringFieldLength(_ string: String, field: UInt32) -> Int {
        string.isEmpty ? 0 : delimitedLength(string.utf8.count, field: field)
    }

    /// Bytes of an identifier field, tag and length included.
    static let idFieldLength = 18

    /// Bytes ``Swift/OutputSpan/value(_:)`` writes.
    @inline(__always)
    static func valueLength(_ value: CharacteristicValue) -> Int {
        switch value {
        case .bool: 2
        case .int(let int): 1 + varintLength(UInt64(bitPattern: int))
        case .unsigned(let unsigned): 1 + varintLength(unsigned)
        case .float: 9
        case .string(let string): delimitedLength(string.utf8.count)
        case .data(let data): delimitedLength(data.count)
        }
    }

    /// Bytes of a length-delimited field whose content has `length` bytes.
    @inline(__always)
    static func delimitedLength(_ length: Int, field: UInt32 = 1) -> Int {
        tagLength(field) + varintLength(UInt64(length)) + length
    }

    /// Bytes of a varint field.
    @inline(__always)
    static func varintFieldLength(_ value: UInt64, field: UInt32 = 1) -> Int {
        tagLength(field) + varintLength(value)
    }

    @inline(__always)
    static func tagLength(_ field: UInt32) -> Int {
        varintLength(UInt64(field) << 3)
    }

    @inline(__always)
    static func varintLength(_ value: UInt64) -> Int {
        // Seven bits per byte; zero takes one byte.
        max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }
}

/// The field writers of ``ProtoWriter``.
extension OutputSpan where Element == UInt8 {
    /// A varint field (`uint64`, `int64`, `uint32`, `bool`).
    mutating func varint(_ field: UInt32, _ value: UInt64) {
        tag(field, wireType: 0)
        appendVarint(value)
    }

    /// A length-delimited field whose content `body` writes in exactly `length` bytes.
    mutating func delimited(_ field: UInt32, length: Int, _ body: (inout OutputSpan<UInt8>) -> Void = { _ in }) {
        tag(field, wireType: 2)
        appendVarint(UInt64(length))
        body(&self)
    }

    /// A `string` field, left out when empty (proto3's default).
    mutating func string(_ field: UInt32, _ string: String) {
        guard !string.isEmpty else { return }
        delimited(field, length: string.utf8.count) { $0.utf8(of: string) }
    }

    /// A string's UTF-8 bytes in one copy (byte by byte, an action set's name of ten cost 280
    /// instructions); byte by byte only for a string whose bytes are not stored contiguously. The
    /// buffer pointers here (and for `data` below) are not C interop: they are borrowed only for
    /// Wire's bounded one-copy append (``Swift/OutputSpan/appendBytes(copying:)``), nothing is kept.
    private mutating func utf8(of string: String) {
        let copied: Void? = string.utf8.withContiguousStorageIfAvailable {
            appendBytes(copying: UnsafeRawBufferPointer($0))
        }
        if copied == nil { for byte in string.utf8 { append(byte) } }
    }

    /// A 16-byte identifier as a `bytes` field.
    mutating func identifier(_ field: UInt32, _ id: UniqueIdentifier) {
        delimited(field, length: 16) { writer in
            // Both halves in one copy (Wire's `appendBytes(of:)`), not byte by byte.
            writer.appendBytes(of: (id.high.bigEndian, id.low.bigEndian))
        }
    }

    /// The content of a `home.v1.CharacteristicValue`: the one member of its oneof that is set.
    mutating func value(_ value: CharacteristicValue) {
        switch value {
        case .bool(let bool):
            varint(1, bool ? 1 : 0)
        case .int(let int):
            varint(2, UInt64(bitPattern: int))
        case .unsigned(let unsigned):
            varint(3, unsigned)
        case .float(let float):
            append(4 << 3 | 1)
            // A double travels as its 8 bytes, least significant first.
            appendBytes(of: float.bitPattern.littleEndian)
        case .string(let string):
            delimited(5, length: string.utf8.count) { $0.utf8(of: string) }
        case .data(let data):
            delimited(6, length: data.count) { writer in
                data.withUnsafeBytes { writer.appendBytes(copying: $0) }
            }
        }
    }

    private mutating func tag(_ field: UInt32, wireType: UInt8) {
        if field < 16 {
            append(UInt8(field) << 3 | wireType)
        } else {
            appendVarint(UInt64(field) << 3 | UInt64(wireType))
        }
    }

    private mutating func appendVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        append(UInt8(rest))
    }
}
