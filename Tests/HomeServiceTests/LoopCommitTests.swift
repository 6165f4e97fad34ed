import TestSupport
import Testing
import UV

@testable import HomeService

/// The server's arrangement: the writer thread's reports reach the store on the event loop through a
/// waker, and each caller is answered from `afterCommit` there.
@Suite struct LoopCommitTests {
    @Test func acknowledgementsArriveOnTheLoopInOrderAfterTheirCommit() throws {
        let harness = try StoreHarness(.file)
        let home = try harness.store.addHome(named: "Home", as: harness.owner)
        harness.store.waitForCommits()
        let path = harness.path

        let loop = try EventLoop()
        var store: HomeStore?
        let commits = try Waker<CommitReport>(loop: loop) { reports in
            for report in reports { store?.handle(report) }
        }
        store = try HomeStore.open(.file(path: path)) { report in _ = commits.send(report) }
        let loopStore = try #require(store)
        var published: [UInt64] = []
        loopStore.changeObserver = { published.append($0.revision) }
        var acknowledged: [Int] = []
        let count = 200
        for index in 0..<count {
            _ = try loopStore.addRoom(named: "Room \(index)", to: home.id, as: harness.owner)
            loopStore.afterCommit { failure in
                #expect(failure == nil)
                acknowledged.append(index)
            }
        }
        loop.run(until: { acknowledged.count == count })
        commits.close()
        try loop.close()

        #expect(acknowledged == Array(0..<count))
        let first = published.first ?? 0
        #expect(published == Array(first..<first + UInt64(count)))
        store = nil
        let reopened = try HomeStore.open(.file(path: path))
        #expect(reopened.homes[home.id]?.rooms.count == count)
    }
}
