/// How much of each home's change log is kept for resuming subscribers.
public struct EventRetention: Hashable, Sendable {
    /// Events kept per home, at most.
    public var maxEvents: Int
    /// Events older than this are dropped, in milliseconds.
    public var maxAgeMilliseconds: Int64

    public init(maxEvents: Int = 10_000, maxAgeMilliseconds: Int64 = 24 * 3_600_000) {
        precondition(maxEvents > 0 && maxAgeMilliseconds > 0, "retention must keep something")
        self.maxEvents = maxEvents
        self.maxAgeMilliseconds = maxAgeMilliseconds
    }
}
