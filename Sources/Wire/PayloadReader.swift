/// Reads the fields of one frame's payload out of the decoder's buffer, which each read is given
/// (`in: bytes`): the reader keeps only its position, since holding the buffer cost a retain and a
/// release of it per frame.
///
/// Every read checks that the field lies inside the payload and throws
/// ``WireError/truncatedPayload(_:)`` otherwise, so a hostile length can never read past the frame.
struct PayloadReader {
    private var index: Int
    private let end: Int
    private let type: FrameType

    init(range: Range<Int>, type: FrameType) {
        self.index = range.lowerBound
        self.end = range.upperBound
        self.type = type
    }

    var remaining: Int { end - index }

    private mutating func take(_ count: Int) throws(WireError) -> Int {
        guard count <= remaining else { throw .truncatedPayload(type) }
        defer { index += count }
        return index
    }

    mutating func readUInt8(in bytes: [UInt8]) throws(WireError) -> UInt8 {
        bytes[try take(1)]
    }

    mutating func readUInt16(in bytes: [UInt8]) throws(WireError) -> UInt16 {
        bytes.getUInt16(at: try take(2))
    }

    mutating func readUInt32(in bytes: [UInt8]) throws(WireError) -> UInt32 {
        bytes.getUInt32(at: try take(4))
    }

    mutating func readUInt64(in bytes: [UInt8]) throws(WireError) -> UInt64 {
        UInt64(try readUInt32(in: bytes)) << 32 | UInt64(try readUInt32(in: bytes))
    }

    mutating func readBytes(_ count: Int, in bytes: [UInt8]) throws(WireError) -> [UInt8] {
        let start = try take(count)
        return Array(bytes[start..<start + count])
    }

    mutating func skip(_ count: Int) throws(WireError) {
        _ = try take(count)
    }

    mutating func readRest(in bytes: [UInt8]) -> [UInt8] {
        defer { index = end }
        return Array(bytes[index..<end])
    }

    mutating func readString(_ count: Int, in bytes: [UInt8]) throws(WireError) -> String {
        let start = try take(count)
        let slice = bytes[start..<start + count]
        // Method names and keys are ASCII: no validation needed. (String(validating:) is generic and
        // showed up in profiles.)
        if slice.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: slice, as: UTF8.self)
        }
        guard let string = String(validating: slice, as: UTF8.self) else {
            throw .invalidUTF8(type)
        }
        return string
    }

    /// Consumes the next `count` bytes if they are `known`'s UTF-8 (a method name, sent again call
    /// after call) and says whether they were: the caller keeps using the string it has, which
    /// saves an allocation and a UTF-8 check per call, and even a retain.
    mutating func skip(_ count: Int, in bytes: [UInt8], ifEqualTo known: String) throws(WireError) -> Bool {
        guard known.utf8.count == count else { return false }
        let start = try take(count)
        let matches = known.utf8.withContiguousStorageIfAvailable { known in
            bytes.withUnsafeBytes { received in
                Self.equal(
                    UnsafeRawBufferPointer(known),
                    UnsafeRawBufferPointer(rebasing: received[start..<start + count])
                )
            }
        }
        if matches == true { return true }
        index = start
        return false
    }

    /// Compares two buffers of equal length a word at a time (a byte loop cost 15 instructions a
    /// byte under callgrind); the last word overlaps the one before it, so no byte is left over.
    private static func equal(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Bool {
        let wordLength = MemoryLayout<UInt64>.size
        let count = first.count
        guard count >= wordLength else {
            return (0..<count).allSatisfy { first[$0] == second[$0] }
        }
        func word(at offset: Int) -> (UInt64, UInt64) {
            (
                first.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
                second.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            )
        }
        var offset = 0
        while offset + wordLength < count {
            let (a, b) = word(at: offset)
            guard a == b else { return false }
            offset += wordLength
        }
        let (a, b) = word(at: count - wordLength)
        return a == b
    }

    mutating func readRestAsString(in bytes: [UInt8]) throws(WireError) -> String {
        try readString(remaining, in: bytes)
    }

    /// Throws unless every byte of the payload was consumed.
    func expectEnd() throws(WireError) {
        guard remaining == 0 else { throw .trailingBytes(type, count: remaining) }
    }
}
