/// A home's recent changes, numbered by a monotonically increasing revision, kept so that a subscriber
/// who reconnects can ask for exactly what it missed (DESIGN.md, "Change notifications").
///
/// Retention is bounded by count and by age; what falls out can no longer be replayed, and a request
/// that reaches back past it is told to resynchronise (HomeKit's homeManagerDidUpdateHomes: reload
/// everything). Times are milliseconds on any clock the caller chooses, so tests need not sleep.
public struct RevisionLog<Event: Sendable>: Sendable {
    public struct Entry: Sendable {
        public let revision: UInt64
        /// When it was appended, in the caller's milliseconds.
        public let time: UInt64
        public let event: Event
    }

    /// The answer to "what happened after revision N?".
    public enum Replay: Sendable {
        /// Exactly the entries after N, in order (empty if N is current).
        case entries([Entry])
        /// N is older than what the log retains (or newer than anything issued): reload everything.
        case resyncNeeded(currentRevision: UInt64)
    }

    public let maxEntries: Int
    public let maxAgeMilliseconds: UInt64
    /// The revision of the latest entry; 0 before the first.
    public private(set) var currentRevision: UInt64
    private var entries = FrontDroppingArray<Entry>()

    /// - Parameter startingAfter: the revision to continue from (the stored revision after a restart).
    public init(maxEntries: Int, maxAgeMilliseconds: UInt64, startingAfter revision: UInt64 = 0) {
        precondition(maxEntries > 0, "a revision log must retain at least one entry")
        self.maxEntries = maxEntries
        self.maxAgeMilliseconds = maxAgeMilliseconds
        self.currentRevision = revision
    }

    /// Entries currently retained.
    public var count: Int { entries.count }

    /// The oldest revision that can still be replayed *after*: a subscriber at this revision or later
    /// gets entries; one before it gets `resyncNeeded`.
    public var oldestResumableRevision: UInt64 {
        entries.first.map { $0.revision - 1 } ?? currentRevision
    }

    /// Appends `event` at `time` and returns its revision; drops what exceeds the retention.
    @discardableResult
    public mutating func append(_ event: Event, at time: UInt64) -> UInt64 {
        currentRevision += 1
        entries.append(Entry(revision: currentRevision, time: time, event: event))
        trim(now: time)
        return currentRevision
    }

    /// Everything after `revision`, or `resyncNeeded` if that is no longer (or never was) known.
    public mutating func replay(after revision: UInt64, now: UInt64) -> Replay {
        trim(now: now)
        guard revision <= currentRevision, revision >= oldestResumableRevision else {
            return .resyncNeeded(currentRevision: currentRevision)
        }
        let skip = Int(revision - oldestResumableRevision)
        return .entries(entries.elements(droppingFirst: skip))
    }

    private mutating func trim(now: UInt64) {
        if entries.count > maxEntries { entries.removeFirst(entries.count - maxEntries) }
        entries.removeFirst { now >= $0.time + maxAgeMilliseconds }
    }
}
