import Testing

@testable import HomeClient

/// A long-running simulated accessory keeps a bounded history of the writes it applied.
@Suite struct RecentHistoryTests {
    @Test(arguments: [1, 3, 1_000])
    func keepsTheLatestAndNeverMoreThanTwiceTheLimit(limit: Int) {
        var history = RecentHistory<Int>(limit: limit)
        for entry in 0..<(10 * limit + 7) {
            history.append(entry)
            #expect(history.entries.count <= 2 * limit)
            #expect(history.entries.count >= min(entry + 1, limit))
            // The newest, in order, with nothing skipped.
            #expect(history.entries.last == entry)
            #expect(history.entries == Array((entry + 1 - history.entries.count)...entry))
        }
        #expect(history.total == 10 * limit + 7)
    }
}
