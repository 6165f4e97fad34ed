/// The small binary layout used inside stored rows for lists and nested values (id lists, actions,
/// events): fixed-width big-endian integers, length-prefixed strings, tagged values.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    /// - Parameter capacity: the bytes the caller expects to write, reserved at once (growing an
    ///   event row's buffer three times cost more than encoding it).
    init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    mutating func writeByte(_ byte: UInt8) { bytes.append(byte) }

    /// Big-endian, in one copy. Why a pointer: this is not C interop but byte writing, borrowed only
    /// for the copy and bounded by the value's size. Typed as bytes, the buffer is copied at once;
    /// as raw bytes it went through the generic sequence append (about 100 instructions), and a
    /// byte at a time cost more still.
    mutating func writeUInt64(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }

    /// Seven bits per byte, least significant first, the high bit set on all but the last.
    mutating func writeVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func writeID(_ id: UniqueIdentifier) {
        writeUInt64(id.high)
        writeUInt64(id.low)
    }

    mutating func writeString(_ text: String) {
        writeUInt64(UInt64(text.utf8.count))
        bytes.append(contentsOf: text.utf8)
    }

    /// The bytes as they are, with no length (the caller writes it first when it is needed).
    mutating func writeBytes(_ data: [UInt8]) {
        bytes.append(contentsOf: data)
    }

    mutating func writeValue(_ value: CharacteristicValue) {
        switch value {
        case .bool(let flag):
            writeByte(1)
            writeByte(flag ? 1 : 0)
        case .int(let integer):
            writeByte(2)
            writeUInt64(UInt64(bitPattern: integer))
        case .float(let number):
            writeByte(3)
            writeUInt64(number.bitPattern)
        case .string(let text):
            writeByte(4)
            writeString(text)
        case .data(let data):
            writeByte(5)
            writeUInt64(UInt64(data.count))
            bytes.append(contentsOf: data)
        case .unsigned(let integer):
            writeByte(6)
            writeUInt64(integer)
        }
    }
}

/// Reads what ``ByteWriter`` wrote; any truncation or unknown tag is a corrupt row.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func readByte() throws(StoreError) -> UInt8 {
        guard offset < bytes.count else { throw .corrupt("a stored field ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt64() throws(StoreError) -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(try readByte()) }
        return value
    }

    mutating func readVarint() throws(StoreError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 64 else { throw .corrupt("a stored varint is longer than ten bytes") }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    mutating func readID() throws(StoreError) -> UniqueIdentifier {
        UniqueIdentifier(high: try readUInt64(), low: try readUInt64())
    }

    mutating func readBytes() throws(StoreError) -> [UInt8] {
        let count = try readUInt64()
        guard count <= UInt64(bytes.count - offset) else { throw .corrupt("a stored field is longer than its row") }
        defer { offset += Int(count) }
        return Array(bytes[offset..<offset + Int(count)])
    }

    mutating func readString() throws(StoreError) -> String {
        String(decoding: try readBytes(), as: UTF8.self)
    }

    mutating func readValue() throws(StoreError) -> CharacteristicValue {
        switch try readByte() {
        case 1: return .bool(try readByte() != 0)
        case 2: return .int(Int64(bitPattern: try readUInt64()))
        case 3: return .float(Double(bitPattern: try readUInt64()))
        case 4: return .string(try readString())
        case 5: return .data(try readBytes())
        case 6: return .integer(try readUInt64())
        case let tag: throw .corrupt("unknown value tag \(tag)")
        }
    }
}

extension Array where Element == UniqueIdentifier {
    /// The ids back to back, 16 bytes each.
    var storedBytes: [UInt8] {
        var writer = ByteWriter(capacity: 16 * count)
        for id in self { writer.writeID(id) }
        return writer.bytes
    }

    init(storedBytes: [UInt8]) throws(StoreError) {
        guard storedBytes.count % 16 == 0 else { throw .corrupt("an id list of \(storedBytes.count) bytes") }
        var reader = ByteReader(storedBytes)
        var ids: [UniqueIdentifier] = []
        while !reader.isAtEnd { ids.append(try reader.readID()) }
        self = ids
    }
}
