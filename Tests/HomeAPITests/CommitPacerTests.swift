import HomeAPI
import TestSupport
import Testing
import UV

@testable import HomeService

/// A loop-hosted store's commits, paced: the next waits for the one in flight to land, and what
/// waited meanwhile goes to the writer as one batch. The writer's reports are held back here, so the
/// test decides when a commit lands.
@Suite(.timeLimit(.minutes(1))) struct CommitPacerTests {
    @Test func mutationsMadeWhileACommitIsInFlightWaitForItToLandThenShareOneCommit() throws {
        let storage = InMemoryStorage()
        let loop = try EventLoop()
        var held: [CommitReport] = []
        let reports = try Waker<CommitReport>(loop: loop) { held.append(contentsOf: $0) }
        let store = try HomeStore.open(.memory(storage)) { _ = reports.send($0) }
        store.waitForCommits()
        let owner = try #require(store.owner).id
        let beforePolling = TasksBeforePolling(loop: loop)
        let pacer = CommitPacer(store: store, loop: loop, runBeforePolling: beforePolling.add)
        store.onCommitWaiting = pacer.commitWaiting
        func reported(through batch: UInt64) -> Bool { held.contains { $0.committedThrough >= batch } }

        // Nothing in flight: the home's commit starts before the loop polls again.
        let home = try store.addHome(named: "Home", as: owner)
        let homeBatch = store.currentTicket.batch
        loop.run(until: { reported(through: homeBatch) })
        #expect(store.hasCommitInFlight)

        // Two rooms, added in different loop iterations while the home's report is held.
        var iterations = 0
        let ticks = LoopTimer(loop: loop)
        ticks.start(after: .milliseconds(1), repeating: .milliseconds(1)) {
            iterations += 1
            if iterations == 1 { _ = try? store.addRoom(named: "Hall", to: home.id, as: owner) }
            if iterations == 5 { _ = try? store.addRoom(named: "Study", to: home.id, as: owner) }
        }
        loop.run(until: { iterations >= 30 })
        ticks.close()
        #expect(try store.home(home.id, as: owner).rooms.count == 2)
        #expect(!reported(through: homeBatch + 1), "a commit started while one was in flight")

        // The home's commit lands: both rooms go in the next commit, one batch.
        for report in held { store.handle(report) }
        pacer.commitsLanded()
        loop.run(until: { reported(through: homeBatch + 1) })
        let next = try #require(held.last)
        #expect(next.committedThrough == homeBatch + 1)
        #expect(next.failure == nil)
        store.handle(next)
        #expect(!store.hasCommitInFlight)

        pacer.close()
        beforePolling.close()
        reports.close()
        try loop.close()
        #expect(try roomNames(of: home.id, in: try HomeStore.open(.memory(storage)), as: owner) == ["Hall", "Study"])
    }

    @Test func aLandingHandledJustBeforeClosingLeavesTheClosedTimerAlone() throws {
        let loop = try EventLoop()
        var held: [CommitReport] = []
        let reports = try Waker<CommitReport>(loop: loop) { held.append(contentsOf: $0) }
        let store = try HomeStore.open(.memory(InMemoryStorage())) { _ = reports.send($0) }
        store.waitForCommits()
        let owner = try #require(store.owner).id
        let beforePolling = TasksBeforePolling(loop: loop)
        let pacer = CommitPacer(store: store, loop: loop, runBeforePolling: beforePolling.add)
        store.onCommitWaiting = pacer.commitWaiting
        let home = try store.addHome(named: "Home", as: owner)
        let homeBatch = store.currentTicket.batch
        loop.run(until: { held.contains { $0.committedThrough >= homeBatch } })
        _ = try store.addRoom(named: "Hall", to: home.id, as: owner)
        // The room's commit waits for the home's to land: let its before-poll task run.
        var iterations = 0
        let ticks = LoopTimer(loop: loop)
        ticks.start(after: .milliseconds(1), repeating: .milliseconds(1)) { iterations += 1 }
        loop.run(until: { iterations >= 3 })
        ticks.close()
        #expect(!held.contains { $0.committedThrough > homeBatch })

        // The landing queues the timer's start for the next poll; the pacer closes first.
        for report in held { store.handle(report) }
        pacer.commitsLanded()
        pacer.close()
        #expect(store.hasCommitInFlight)
        loop.run(until: { held.contains { $0.committedThrough > homeBatch } })
        #expect(held.last?.committedThrough == homeBatch + 1)

        beforePolling.close()
        reports.close()
        try loop.close()
    }

    @Test func closingStartsWhatWaitsAndLaterBatchesAtOnce() throws {
        let storage = InMemoryStorage()
        let loop = try EventLoop()
        let store = try HomeStore.open(.memory(storage))
        let owner = try #require(store.owner).id
        let beforePolling = TasksBeforePolling(loop: loop)
        let pacer = CommitPacer(store: store, loop: loop, runBeforePolling: beforePolling.add)
        store.onCommitWaiting = pacer.commitWaiting
        let home = try store.addHome(named: "Home", as: owner)
        // Waiting for the loop's next poll, which never comes: closing starts it.
        pacer.close()
        #expect(store.hasCommitInFlight)
        _ = try store.addRoom(named: "Hall", to: home.id, as: owner)
        #expect(store.waitForCommits() == nil)
        beforePolling.close()
        try loop.close()
        #expect(try roomNames(of: home.id, in: try HomeStore.open(.memory(storage)), as: owner) == ["Hall"])
    }
}

private func roomNames(of home: HomeID, in store: HomeStore, as account: AccountID) throws -> Set<String> {
    Set(try store.home(home, as: account).rooms.map { try store.room($0, as: account).name })
}

/// Tasks run once just before the loop next polls, as ``RPCServer/runBeforePolling(_:)`` runs them.
private final class TasksBeforePolling {
    private var tasks: [() -> Void] = []
    private var hook: BeforePollHook!

    init(loop: EventLoop) {
        hook = BeforePollHook(loop: loop, running: false) { [unowned self] in
            hook.stop()
            while !tasks.isEmpty { tasks.removeFirst()() }
        }
    }

    func add(_ task: @escaping () -> Void) {
        tasks.append(task)
        hook.start()
    }

    func close() { hook.close() }
}
