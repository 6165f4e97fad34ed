import CNGHTTP2

/// Header fields to send, kept as one byte buffer (names and values back to back) so that a block
/// built once (a gRPC response's headers) is sent again without building anything.
public struct HeaderBlock: Sendable {
    private var bytes: [UInt8] = []
    private var lengths: [(name: Int, value: Int)] = []

    public init() {}

    public init(_ fields: KeyValuePairs<String, String>) {
        for (name, value) in fields { add(name, value) }
    }

    /// Adds a field; `name` must be lower case (HTTP/2 refuses upper-case names).
    public mutating func add(_ name: String, _ value: String) {
        add(name, Array(value.utf8))
    }

    public mutating func add(_ name: String, _ value: [UInt8]) {
        bytes.append(contentsOf: name.utf8)
        bytes.append(contentsOf: value)
        lengths.append((name.utf8.count, value.count))
    }

    public var count: Int { lengths.count }

    /// Runs `body` with the fields as nghttp2 takes them, valid only during the call (nghttp2 copies).
    func withFields<R>(_ body: (UnsafeMutableBufferPointer<nghttp2_nv>) -> R) -> R {
        var copy = bytes
        return copy.withUnsafeMutableBufferPointer { buffer in
            var fields: [nghttp2_nv] = []
            guard let base = buffer.baseAddress else { return fields.withUnsafeMutableBufferPointer { body($0) } }
            fields.reserveCapacity(lengths.count)
            var offset = 0
            for (name, value) in lengths {
                let start = base + offset
                fields.append(
                    nghttp2_nv(
                        name: start,
                        value: start + name,
                        namelen: name,
                        valuelen: value,
                        flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
                    )
                )
                offset += name + value
            }
            return fields.withUnsafeMutableBufferPointer { body($0) }
        }
    }
}
