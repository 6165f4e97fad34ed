/// Call latencies in power-of-two microsecond buckets: bucket `i` counts latencies in
/// [2^(i-1), 2^i) µs (bucket 0: under 1 µs). Recording is a few instructions; percentiles are
/// bucket upper bounds, so within a factor of two.
public struct LatencyHistogram: Hashable, Sendable {
    public static let bucketCount = 40
    public private(set) var buckets = [UInt64](repeating: 0, count: LatencyHistogram.bucketCount)
    public private(set) var count: UInt64 = 0
    public private(set) var totalMicroseconds: UInt64 = 0

    public init() {}

    /// A histogram of counts kept elsewhere (``ServerMetrics`` keeps its methods' in one array).
    init(buckets: [UInt64], count: UInt64, totalMicroseconds: UInt64) {
        precondition(buckets.count == Self.bucketCount, "a latency histogram has \(Self.bucketCount) buckets")
        self.buckets = buckets
        self.count = count
        self.totalMicroseconds = totalMicroseconds
    }

    /// The bucket a latency of `microseconds` falls in.
    static func bucket(ofMicroseconds microseconds: UInt64) -> Int {
        min(bucketCount - 1, UInt64.bitWidth - microseconds.leadingZeroBitCount)
    }

    /// Records `calls` calls that each took `microseconds`.
    public mutating func record(microseconds: UInt64, calls: UInt64 = 1) {
        buckets[Self.bucket(ofMicroseconds: microseconds)] += calls
        count += calls
        totalMicroseconds &+= microseconds &* calls
    }

    /// The upper bound, in microseconds, of the bucket holding the `fraction` quantile (0...1).
    public func percentile(_ fraction: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = UInt64((Double(count) * min(max(fraction, 0), 1)).rounded(.up))
        var seen: UInt64 = 0
        for (index, bucketCount) in buckets.enumerated() {
            seen += bucketCount
            if seen >= max(rank, 1) { return UInt64(1) << index }
        }
        return UInt64(1) << (Self.bucketCount - 1)
    }
}
