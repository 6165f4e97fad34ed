// Big-endian integers into and out of byte buffers. Why pointers outside the interop layers (UV, SQLite, HTTP2, TLS):
// they are not C interop but the frame encoder's byte copying, borrowed only for each copy and
// bounded by the value's size (each function says why), and Wire, which has no dependencies, cannot
// reach UV; the reads are bounds-checked loads of the array's span.

extension [UInt8] {
    /// Appends `value` in big-endian order.
    mutating func writeUInt16(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends `value` in big-endian order.
    mutating func writeUInt32(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value >> 24))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    /// Appends `value` in big-endian order.
    mutating func writeUInt64(_ value: UInt64) {
        writeUInt32(UInt32(truncatingIfNeeded: value >> 32))
        writeUInt32(UInt32(truncatingIfNeeded: value))
    }

    /// Overwrites four bytes at `index` with `value` in big-endian order.
    mutating func setUInt32(_ value: UInt32, at index: Int) {
        self[index] = UInt8(truncatingIfNeeded: value >> 24)
        self[index + 1] = UInt8(truncatingIfNeeded: value >> 16)
        self[index + 2] = UInt8(truncatingIfNeeded: value >> 8)
        self[index + 3] = UInt8(truncatingIfNeeded: value)
    }

    /// The big-endian u16 at `index` (traps if it is not inside the array). Inlined: every frame
    /// header reads these, and a call to them cost more than the loads.
    @inline(__always)
    func getUInt16(at index: Int) -> UInt16 {
        // One bounds-checked load of the array's span instead of a checked subscript per byte: no
        // pointer, and any bit pattern is a valid integer, so the load is safe despite its name.
        UInt16(bigEndian: span.bytes.unsafeLoadUnaligned(fromByteOffset: index, as: UInt16.self))
    }

    /// The big-endian u32 at `index` (traps if it is not inside the array; inlined and loaded as the
    /// u16 above: one bounds-checked load of the span, no pointer).
    @inline(__always)
    func getUInt32(at index: Int) -> UInt32 {
        UInt32(bigEndian: span.bytes.unsafeLoadUnaligned(fromByteOffset: index, as: UInt32.self))
    }
}

extension [UInt8] {
    /// Appends the bytes of `value` (a tuple of integers laid out without padding) in one copy.
    /// As an `UnsafeRawBufferPointer` the bytes were appended one by one through an iterator (about
    /// 80 instructions for a 10-byte header); typed as `UInt8`, they are copied at once.
    ///
    /// Why a pointer here: this is not C interop but the frame encoder's byte writing. The buffer
    /// is borrowed only for the copy and bounded by `value`'s size; nothing is kept or reaches C.
    mutating func appendBytes<T>(of value: T) {
        Swift.withUnsafeBytes(of: value) { raw in
            append(contentsOf: raw.assumingMemoryBound(to: UInt8.self))
        }
    }
}

extension OutputSpan where Element == UInt8 {
    /// Appends the bytes of `value` (a tuple of integers laid out without padding, or raw bytes'
    /// buffer) with one room check for all of them.
    ///
    /// Why pointers here: this is not C interop but the hot path's byte writing. `append(_:)` checks
    /// the room for every byte (about ten instructions a byte), and a unary answer writes two frame
    /// headers per call. ``appendBytes(copying:)`` checks the room for all of them before it copies,
    /// so nothing is written past the span; the bytes are counted as initialised only after they
    /// are stored. Always
    /// inlined: called, the copy's size is not known and costs about 100 instructions a call more
    /// (inlinable, so that the home API's hand-written protobuf encoders get the same copy).
    @inlinable @inline(__always)
    public mutating func appendBytes<T: BitwiseCopyable>(of value: T) {
        Swift.withUnsafeBytes(of: value) { appendBytes(copying: $0) }
    }

    /// Appends `source`'s bytes in one copy (see ``appendBytes(of:)`` for why through pointers).
    /// Traps, before writing anything, when they do not fit in the span's free room.
    @inlinable @inline(__always)
    public mutating func appendBytes(copying source: UnsafeRawBufferPointer) {
        withUnsafeMutableBufferPointer { bytes, count in
            // Checked here, in every build: a slice of an unsafe buffer is bounds-checked only in
            // debug builds, and a release build would copy past the span's end.
            precondition(source.count <= bytes.count - count, "appendBytes: the bytes do not fit in the span")
            UnsafeMutableRawBufferPointer(
                UnsafeMutableBufferPointer(rebasing: bytes[count..<count + source.count])
            ).copyMemory(from: source)
            count += source.count
        }
    }
}
