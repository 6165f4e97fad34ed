import Testing

@testable import HomeService

@Suite struct RevisionLogTests {
    func entries(_ replay: RevisionLog<String>.Replay) -> [String]? {
        if case .entries(let entries) = replay { return entries.map(\.event) }
        return nil
    }

    @Test(arguments: [0, 1, 5, 9, 10])
    func replayAfterKReturnsExactlyTheLaterEvents(k: Int) {
        var log = RevisionLog<String>(maxEntries: 100, maxAgeMilliseconds: 60_000)
        for index in 1...10 { log.append("event \(index)", at: UInt64(index)) }
        let replayed = entries(log.replay(after: UInt64(k), now: 10))
        #expect(replayed == ((k + 1)..<11).map { "event \($0)" })
    }

    @Test func revisionsIncreaseByOne() {
        var log = RevisionLog<String>(maxEntries: 3, maxAgeMilliseconds: 60_000)
        #expect(log.currentRevision == 0)
        #expect(log.append("a", at: 0) == 1)
        #expect(log.append("b", at: 0) == 2)
        #expect(log.currentRevision == 2)
    }

    @Test func beyondCountRetentionAResyncIsNeeded() {
        var log = RevisionLog<String>(maxEntries: 3, maxAgeMilliseconds: 60_000)
        for index in 1...10 { log.append("event \(index)", at: 0) }
        #expect(log.count == 3)
        #expect(log.oldestResumableRevision == 7)
        #expect(entries(log.replay(after: 7, now: 0)) == ["event 8", "event 9", "event 10"])
        guard case .resyncNeeded(let current) = log.replay(after: 6, now: 0) else {
            Issue.record("expected a resync")
            return
        }
        #expect(current == 10)
    }

    @Test func beyondAgeRetentionAResyncIsNeeded() {
        var log = RevisionLog<String>(maxEntries: 100, maxAgeMilliseconds: 1_000)
        log.append("old", at: 0)
        log.append("newer", at: 600)
        #expect(entries(log.replay(after: 0, now: 999)) == ["old", "newer"])
        // At 1,000 ms the first entry has aged out: revision 0 can no longer be resumed from.
        if case .entries = log.replay(after: 0, now: 1_000) { Issue.record("revision 0 should need a resync") }
        #expect(entries(log.replay(after: 1, now: 1_000)) == ["newer"])
        #expect(entries(log.replay(after: 2, now: 5_000)) == [])
    }

    @Test func aRevisionFromTheFutureNeedsAResync() {
        var log = RevisionLog<String>(maxEntries: 10, maxAgeMilliseconds: 1_000)
        log.append("a", at: 0)
        if case .entries = log.replay(after: 5, now: 0) { Issue.record("revision 5 was never issued") }
    }

    @Test func continuesFromAStoredRevisionAfterARestart() {
        var log = RevisionLog<String>(maxEntries: 10, maxAgeMilliseconds: 1_000, startingAfter: 41)
        #expect(log.append("after restart", at: 0) == 42)
        #expect(entries(log.replay(after: 41, now: 0)) == ["after restart"])
        if case .entries = log.replay(after: 40, now: 0) { Issue.record("revision 40 predates the restart") }
    }

    @Test func longRunsStayWithinRetention() {
        var log = RevisionLog<Int>(maxEntries: 50, maxAgeMilliseconds: 1_000_000)
        for index in 0..<10_000 { log.append(index, at: UInt64(index)) }
        #expect(log.count == 50)
        guard case .entries(let tail) = log.replay(after: 9_990, now: 10_000) else {
            Issue.record("expected entries")
            return
        }
        #expect(tail.map(\.event) == Array(9_990..<10_000))
        #expect(tail.map(\.revision) == Array(9_991...10_000))
    }
}
