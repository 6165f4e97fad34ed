public import RPCServer
import UV

/// The store's commits as `home.v1.ServerInfo/Get` reports them: counted on the loop thread as
/// each commit's report arrives there (the server's owner records; ``ServerInfoService`` reads).
public final class StoreCommitMetrics {
    /// A commit this long or longer is counted as slow.
    public static let slowThreshold = Duration.milliseconds(2)

    public private(set) var count: UInt64 = 0
    public private(set) var changes: UInt64 = 0
    public private(set) var durations = LatencyHistogram()
    /// COMMIT alone: with WAL and `synchronous=FULL`, the WAL's fsync.
    public private(set) var fsyncDurations = LatencyHistogram()
    /// Row changes per commit (group commit's batch sizes), in the same power-of-two buckets.
    public private(set) var groupSizes = LatencyHistogram()
    public private(set) var longestMicroseconds: UInt64 = 0
    public private(set) var slow: UInt64 = 0

    public init() {}

    /// One commit of `changes` row changes that took `duration`, `commit` of it in COMMIT itself.
    public func record(_ duration: Duration, commit: Duration = .zero, changes: Int) {
        let microseconds = duration.wholeMicroseconds
        count += 1
        self.changes += UInt64(max(0, changes))
        durations.record(microseconds: microseconds)
        fsyncDurations.record(microseconds: commit.wholeMicroseconds)
        groupSizes.record(microseconds: UInt64(max(0, changes)))
        longestMicroseconds = max(longestMicroseconds, microseconds)
        if duration >= Self.slowThreshold { slow += 1 }
    }
}
