/// Sets and dictionaries keyed by identifiers hash them with one keyed multiply instead of through
/// `Hasher`: SipHash over the two words cost about 150 instructions a lookup, and a cached read
/// makes four (its characteristic, the member index twice, the accessory), start-up millions.
///
/// `_rawHashValue(seed:)` is the hook the standard library's own small keys (integers, pointers)
/// use for the same reason. Identifiers are random, so the multiply spreads them evenly; the keys
/// are drawn per process, so a peer that chooses identifiers cannot aim them at one bucket without
/// knowing them (the folded multiply of wyhash and aHash).
extension UniqueIdentifier {
    @inlinable
    public func _rawHashValue(seed: Int) -> Int {
        let keys = Self.hashKeys
        // Two folds: after one, the low bits (which pick the bucket) of identifiers that differ in
        // one word only filled 4% fewer buckets than random keys would.
        let words = (high ^ keys.0).multipliedFullWidth(by: low ^ keys.1)
        let mixed = (words.high ^ words.low ^ UInt64(UInt(bitPattern: seed))).multipliedFullWidth(by: keys.2)
        return Int(truncatingIfNeeded: mixed.high ^ mixed.low)
    }

    @usableFromInline
    static let hashKeys: (UInt64, UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        // Odd, so that no multiply by a key loses bits.
        return (generator.next(), generator.next(), generator.next() | 1)
    }()
}

extension ID {
    @inlinable
    public func _rawHashValue(seed: Int) -> Int { raw._rawHashValue(seed: seed) }
}
