import HomeService

/// Wrong setup codes allowed per accessory: a bucket of `burst` attempts that refills one every
/// `refillMilliseconds`. Past it, an attempt is refused without the code being compared, so a
/// guesser learns nothing: at one guess per 10 s, the 10^8 codes take about 30 years on average.
struct PairingAttempts {
    static let burst = 5
    static let refillMilliseconds: UInt64 = 10_000
    /// Buckets kept at most (full buckets are forgotten first; they carry nothing).
    static let maxTracked = 10_000

    private struct Bucket {
        var tokens: Int
        var refilledAt: UInt64
    }

    private var buckets: [AccessoryID: Bucket] = [:]

    /// `nil` when an attempt for `accessory` may be made now, else the milliseconds until one may.
    mutating func wait(for accessory: AccessoryID, now: UInt64) -> UInt64? {
        guard var bucket = buckets[accessory] else { return nil }
        refill(&bucket, now: now)
        buckets[accessory] = bucket.tokens == Self.burst ? nil : bucket
        guard bucket.tokens == 0 else { return nil }
        return Self.refillMilliseconds - (now - bucket.refilledAt)
    }

    /// A wrong code was tried for `accessory`.
    mutating func failed(_ accessory: AccessoryID, now: UInt64) {
        var bucket = buckets[accessory] ?? Bucket(tokens: Self.burst, refilledAt: now)
        refill(&bucket, now: now)
        if bucket.tokens == Self.burst { bucket.refilledAt = now }
        bucket.tokens = max(0, bucket.tokens - 1)
        if buckets[accessory] == nil && buckets.count >= Self.maxTracked { forgetFullBuckets(now: now) }
        buckets[accessory] = bucket
    }

    private func refill(_ bucket: inout Bucket, now: UInt64) {
        let earned = (now - bucket.refilledAt) / Self.refillMilliseconds
        guard earned > 0 else { return }
        bucket.tokens = min(Self.burst, bucket.tokens + Int(clamping: earned))
        bucket.refilledAt += earned * Self.refillMilliseconds
    }

    private mutating func forgetFullBuckets(now: UInt64) {
        for (accessory, bucket) in buckets {
            var current = bucket
            refill(&current, now: now)
            if current.tokens == Self.burst { buckets[accessory] = nil }
        }
    }
}
