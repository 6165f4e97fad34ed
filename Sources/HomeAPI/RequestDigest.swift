internal import Crypto

/// What an idempotency record keeps of its request, to refuse a different request under a used key:
/// 16 bytes of SipHash-2-4-128 over the method's name, a zero byte and the request's bytes.
///
/// A keyed hash with a fixed, public key, not a secret one: the digest is stored and must read the
/// same after a restart, and a collision can only confuse its own account (keys are per account),
/// which gains nothing by making one. SHA-256, which records made before this version carry (32
/// bytes, still matched), cost about 5,300 instructions a keyed write; this costs about 700.
struct RequestDigest {
    static let byteCount = 16
    /// SHA-256's: records made before the digest was SipHash's.
    static let legacyByteCount = 32

    /// The key, "homerpc request digest" cut to 16 bytes: any fixed value does.
    private static let key: (UInt64, UInt64) = (0x7072_6d6f_6863_7220, 0x6964_2074_7365_7571)

    /// The digest of `method` and `requestBytes`.
    static func of(_ method: String, _ requestBytes: ArraySlice<UInt8>) -> [UInt8] {
        var hasher = SipHasher128(key: key)
        hasher.append(method.utf8.span)
        hasher.append(0)
        hasher.append(requestBytes.span)
        return hasher.finalize()
    }

    /// Whether `stored` is the digest of `method` and `requestBytes`, in either form.
    static func matches(_ stored: [UInt8], _ method: String, _ requestBytes: ArraySlice<UInt8>) -> Bool {
        if stored.count == legacyByteCount {
            var hasher = SHA256()
            hasher.update(data: Array(method.utf8))
            hasher.update(data: [0])
            hasher.update(data: requestBytes)
            return stored.elementsEqual(hasher.finalize())
        }
        return stored == of(method, requestBytes)
    }
}

/// SipHash-2-4 with a 128-bit output (Aumasson and Bernstein's reference, `vectors_sip128`).
struct SipHasher128 {
    private var v0: UInt64
    private var v1: UInt64
    private var v2: UInt64
    private var v3: UInt64
    /// Bytes not yet compressed, least significant first.
    private var pending: UInt64 = 0
    private var length: UInt64 = 0

    init(key: (UInt64, UInt64)) {
        v0 = key.0 ^ 0x736f_6d65_7073_6575
        v1 = key.1 ^ 0x646f_7261_6e64_6f6d ^ 0xee
        v2 = key.0 ^ 0x6c79_6765_6e65_7261
        v3 = key.1 ^ 0x7465_6462_7974_6573
    }

    /// Eight bytes a word where it can (a byte at a time, the digest of a keyed write's 100 bytes
    /// cost 3,000 instructions).
    mutating func append(_ bytes: Span<UInt8>) {
        var index = 0
        while index < bytes.count, length & 7 != 0 {
            append(bytes[index])
            index += 1
        }
        let raw = bytes.bytes
        while bytes.count - index >= 8 {
            // One bounds-checked load of the word (a byte at a time cost 40 instructions a word);
            // "unsafe" only as to the type loaded, which any bytes make.
            let word = UInt64(littleEndian: raw.unsafeLoadUnaligned(fromByteOffset: index, as: UInt64.self))
            compress(word)
            length &+= 8
            index += 8
        }
        while index < bytes.count {
            append(bytes[index])
            index += 1
        }
    }

    mutating func append(_ byte: UInt8) {
        pending |= UInt64(byte) << (8 * (length & 7))
        length &+= 1
        if length & 7 == 0 {
            compress(pending)
            pending = 0
        }
    }

    /// The 16 bytes of the hash (consumes the hasher).
    consuming func finalize() -> [UInt8] {
        compress(pending | length << 56)
        v2 ^= 0xee
        for _ in 0..<4 { round() }
        let low = v0 ^ v1 ^ v2 ^ v3
        v1 ^= 0xdd
        for _ in 0..<4 { round() }
        let high = v0 ^ v1 ^ v2 ^ v3
        // Both words in one copy, least significant byte first (as the reference writes them).
        return withUnsafeBytes(of: (low.littleEndian, high.littleEndian)) { Array($0) }
    }

    // Inlined: called, a round cost more than its fourteen operations.
    @inline(__always)
    private mutating func compress(_ word: UInt64) {
        v3 ^= word
        round()
        round()
        v0 ^= word
    }

    @inline(__always)
    private mutating func round() {
        v0 &+= v1
        v1 = v1.rotatedLeft(13) ^ v0
        v0 = v0.rotatedLeft(32)
        v2 &+= v3
        v3 = v3.rotatedLeft(16) ^ v2
        v0 &+= v3
        v3 = v3.rotatedLeft(21) ^ v0
        v2 &+= v1
        v1 = v1.rotatedLeft(17) ^ v2
        v2 = v2.rotatedLeft(32)
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}
