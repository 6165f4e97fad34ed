import HomeService

/// Protobuf's binary encoding written by hand, for the few messages on hot paths whose generated
/// encoder costs more than the work around them: swift-protobuf sizes and writes a message in two
/// generic passes and sizes each nested message again at every level above it. Each message written
/// here has a test that compares its bytes with the generated encoder's.
///
/// Fields are written in field-number order, as the generated code does; a caller leaves a field
/// out at its proto3 default (a member of a oneof is written whenever it is set).
struct ProtoWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    private init() {}

    /// Appends what `body` writes to `buffer`, which is moved into the writer and back (not copied).
    static func append(to buffer: inout [UInt8], _ body: (inout ProtoWriter) -> Void) {
        // Not `init(capacity:)`: reserving on the empty array allocates.
        var writer = ProtoWriter()
        swap(&writer.bytes, &buffer)
        body(&writer)
        swap(&writer.bytes, &buffer)
    }

    /// A varint field (`uint64`, `int64`, `uint32`, `bool`).
    mutating func varint(_ field: UInt32, _ value: UInt64) {
        tag(field, wireType: 0)
        appendVarint(value)
    }

    /// A length-delimited field whose content `body` writes in exactly `length` bytes.
    mutating func delimited(_ field: UInt32, length: Int, _ body: (inout ProtoWriter) -> Void = { _ in }) {
        tag(field, wireType: 2)
        appendVarint(UInt64(length))
        body(&self)
    }

    private mutating func tag(_ field: UInt32, wireType: UInt8) {
        if field < 16 {
            bytes.append(UInt8(field) << 3 | wireType)
        } else {
            appendVarint(UInt64(field) << 3 | UInt64(wireType))
        }
    }

    /// A 16-byte identifier as a `bytes` field.
    mutating func id(_ field: UInt32, _ id: UniqueIdentifier) {
        delimited(field, length: 16) { writer in
            withUnsafeBytes(of: (id.high.bigEndian, id.low.bigEndian)) { writer.bytes.append(contentsOf: $0) }
        }
    }

    /// Bytes of an identifier field, tag and length included.
    static let idFieldLength = 18

    /// The content of a `home.v1.CharacteristicValue`: the one member of its oneof that is set.
    mutating func value(_ value: CharacteristicValue) {
        switch value {
        case .bool(let bool):
            varint(1, bool ? 1 : 0)
        case .int(let int):
            varint(2, UInt64(bitPattern: int))
        case .float(let float):
            bytes.append(4 << 3 | 1)
            withUnsafeBytes(of: float.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        case .string(let string):
            delimited(5, length: string.utf8.count) { $0.bytes.append(contentsOf: string.utf8) }
        case .data(let data):
            delimited(6, length: data.count) { $0.bytes.append(contentsOf: data) }
        }
    }

    /// Bytes ``value(_:)`` writes.
    static func valueLength(_ value: CharacteristicValue) -> Int {
        switch value {
        case .bool: 2
        case .int(let int): 1 + varintLength(UInt64(bitPattern: int))
        case .float: 9
        case .string(let string): delimitedLength(string.utf8.count)
        case .data(let data): delimitedLength(data.count)
        }
    }

    /// Bytes of a length-delimited field whose content has `length` bytes.
    static func delimitedLength(_ length: Int, field: UInt32 = 1) -> Int {
        tagLength(field) + varintLength(UInt64(length)) + length
    }

    /// Bytes of a varint field.
    static func varintFieldLength(_ value: UInt64, field: UInt32 = 1) -> Int {
        tagLength(field) + varintLength(value)
    }

    static func tagLength(_ field: UInt32) -> Int {
        varintLength(UInt64(field) << 3)
    }

    static func varintLength(_ value: UInt64) -> Int {
        // Seven bits per byte; zero takes one byte.
        max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }

    private mutating func appendVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}
