/// The latest entries of an unbounded series, for a process that runs for hours: a simulated
/// accessory serving a benchmark applies tens of thousands of writes a second, and kept each.
///
/// Holds at least the last `limit` entries and never more than twice that: trimming by half when
/// full moves each entry at most once, where dropping the oldest on every append would move them all.
struct RecentHistory<Element> {
    let limit: Int
    /// Oldest first.
    private(set) var entries: [Element] = []
    /// Every entry ever appended, trimmed ones included.
    private(set) var total = 0

    init(limit: Int) {
        precondition(limit > 0, "a history keeps at least one entry")
        self.limit = limit
    }

    mutating func append(_ entry: Element) {
        if entries.count == 2 * limit { entries.removeFirst(limit) }
        entries.append(entry)
        total += 1
    }
}
