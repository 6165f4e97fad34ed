import CNGHTTP2

/// Header fields to send. The fields live in one allocation with nghttp2's field list pointing into
/// it, made when the block is built: a block built once (a gRPC response's headers, the OK trailers)
/// is submitted again and again with nothing copied or allocated (nghttp2 copies what it sends).
public struct HeaderBlock: @unchecked Sendable {
    /// Immutable once built; a block that grows gets new storage.
    private final class Storage {
        let bytes: UnsafeMutableBufferPointer<UInt8>
        let fields: UnsafeMutableBufferPointer<nghttp2_nv>

        init(_ pairs: [(name: [UInt8], value: [UInt8])]) {
            bytes = .allocate(capacity: max(1, pairs.reduce(0) { $0 + $1.name.count + $1.value.count }))
            fields = .allocate(capacity: max(1, pairs.count))
            var offset = 0
            for (index, pair) in pairs.enumerated() {
                let name = bytes.baseAddress! + offset
                _ = UnsafeMutableBufferPointer(start: name, count: pair.name.count).initialize(from: pair.name)
                let value = name + pair.name.count
                _ = UnsafeMutableBufferPointer(start: value, count: pair.value.count).initialize(from: pair.value)
                offset += pair.name.count + pair.value.count
                (fields.baseAddress! + index).initialize(
                    to: nghttp2_nv(
                        name: name,
                        value: value,
                        namelen: pair.name.count,
                        valuelen: pair.value.count,
                        flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
                    )
                )
            }
        }

        deinit {
            bytes.deallocate()
            fields.deallocate()
        }
    }

    private var pairs: [(name: [UInt8], value: [UInt8])] = []
    private var storage = Storage([])

    public init() {}

    public init(_ fields: KeyValuePairs<String, String>) {
        pairs = fields.map { (Array($0.key.utf8), Array($0.value.utf8)) }
        storage = Storage(pairs)
    }

    /// Adds a field; `name` must be lower case (HTTP/2 refuses upper-case names).
    public mutating func add(_ name: String, _ value: String) {
        add(name, Array(value.utf8))
    }

    public mutating func add(_ name: String, _ value: [UInt8]) {
        pairs.append((Array(name.utf8), value))
        storage = Storage(pairs)
    }

    public var count: Int { pairs.count }

    /// Runs `body` with the fields as nghttp2 takes them, valid only during the call (nghttp2 copies).
    func withFields<R>(_ body: (UnsafeMutableBufferPointer<nghttp2_nv>) -> R) -> R {
        let storage = self.storage
        return withExtendedLifetime(storage) {
            body(UnsafeMutableBufferPointer(start: storage.fields.baseAddress, count: pairs.count))
        }
    }
}
