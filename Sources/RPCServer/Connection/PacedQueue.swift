import UV

/// Work on connections done at most ``batchSize`` per loop iteration: admitting new connections
/// (starting to read them) and tearing down those whose peers closed.
///
/// When thousands of peers arrive or leave at once (a fleet of accessories reconnecting after a
/// restart, or stopping) their events come in one poll, and doing each one's work there keeps the
/// loop from polling for as long as all of it takes: a quarter of a second for 10,000 teardowns,
/// most of it the kernel's TCP teardown inside `close` (bench/RESULTS.md), during which every other
/// peer's calls wait. Past a batch in one iteration, the rest wait in a queue taken a batch at a
/// time from a timer, and the loop polls between batches. Loop thread only.
final class PacedQueue {
    static let batchSize = 256

    private let loop: EventLoop
    private let work: (any ServedConnection) -> Void
    /// Connections still allowed in this iteration before they queue; refilled before each poll.
    private var budget = PacedQueue.batchSize
    /// Created on first use: the hook that refills the budget, and the timer that takes the queue.
    private var refill: BeforePollHook?
    private var timer: LoopTimer?
    private var waiting: [any ServedConnection] = []
    private var head = 0
    private var isClosed = false

    init(loop: EventLoop, work: @escaping (any ServedConnection) -> Void) {
        self.loop = loop
        self.work = work
    }

    /// Connections waiting for their turn.
    var count: Int { waiting.count - head }

    /// Does the work for `connection` now, or after the connections queued before it.
    func add(_ connection: any ServedConnection) {
        if isClosed { return work(connection) }
        if budget > 0 && count == 0 {
            spendBudget()
            work(connection)
            return
        }
        waiting.append(connection)
        let timer = self.timer ?? LoopTimer(loop: loop)
        self.timer = timer
        guard !timer.isActive else { return }
        // Strong: ``close()`` releases the handles, which breaks the cycle.
        timer.start(after: .milliseconds(1), repeating: .milliseconds(1)) { self.takeBatch() }
    }

    private func spendBudget() {
        if budget == Self.batchSize {
            let refill = self.refill ?? BeforePollHook(loop: loop, running: false) { self.refillBudget() }
            self.refill = refill
            refill.start()
        }
        budget -= 1
    }

    private func refillBudget() {
        budget = Self.batchSize
        refill?.stop()
    }

    private func takeBatch() {
        let end = min(head + Self.batchSize, waiting.count)
        for connection in waiting[head..<end] { work(connection) }
        head = end
        guard count == 0 else { return }
        waiting = []
        head = 0
        timer?.stop()
    }

    /// Does the work of everything queued now and releases the handles (the server has stopped).
    func close() {
        isClosed = true
        for connection in waiting[head...] { work(connection) }
        waiting = []
        head = 0
        timer?.close()
        timer = nil
        refill?.close()
        refill = nil
    }
}
