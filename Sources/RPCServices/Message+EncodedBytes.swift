// Why pointers outside the interop layers (UV, SQLite, HTTP2, TLS): they are not C interop. swift-protobuf's buffer
// protocol requires the two lenders of `EncodedBytes` below, which forward the array's own and keep
// nothing (see the comment on them); they belong with the protobuf encoding, which the interop layers
// know nothing of.

public import SwiftProtobuf

extension SwiftProtobuf.Message {
    /// The message's binary encoding, as `serializedBytes()` gives it, built for less.
    ///
    /// `serializedBytes() as [UInt8]` sizes its output with `[UInt8](repeating:count:)`, reached
    /// from swift-protobuf's generic code and so unspecialized: a generic-metadata lookup of about
    /// 500 instructions per message under callgrind, more than encoding a small response itself.
    /// The buffer type here allocates in code specialized for bytes. (Owning raw memory instead cost
    /// more: a class to free it if encoding throws, and a copy into the array.)
    public func encodedBytes() throws -> [UInt8] {
        let encoded: EncodedBytes = try serializedBytes()
        return encoded.bytes
    }
}

/// A byte buffer for swift-protobuf's encoder (see ``SwiftProtobuf/Message/encodedBytes()``).
private struct EncodedBytes: SwiftProtobufContiguousBytes {
    var bytes: [UInt8]

    init(repeating byte: UInt8, count: Int) {
        // `Array(repeating:count:)` is the slow path this type avoids; copying a collection is not.
        bytes = Array(repeatElement(byte, count: count))
    }

    init<S: Sequence>(_ sequence: S) where S.Element == UInt8 {
        bytes = Array(sequence)
    }

    var count: Int { bytes.count }

    // The two lenders below are what `SwiftProtobufContiguousBytes` requires of a buffer: they only
    // forward to the array's own, for swift-protobuf's encoder to write into. No pointer is kept or
    // computed here and nothing reaches C, so this is not interop code for the UV, SQLite, HTTP2 or TLS layers.

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeMutableBytes(body)
    }
}
