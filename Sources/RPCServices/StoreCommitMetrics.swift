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
    public private(set) var longestMicroseconds: UInt64 = 0
    public private(set) var slow: UInt64 = 0

    public init() {}

    /// One commit of `changes` row changes that took `duration`.
    public func record(_ duration: Duration, changes: Int) {
        let microseconds = duration.wholeMicroseconds
        count += 1
        self.changes += UInt64(max(0, changes))
        durations.record(microseconds: microseconds)
        longestMicroseconds = max(longestMicroseconds, microseconds)
        if duration >= Self.slowThreshold { slow += 1 }
    }
}
