import UV

/// Tears down connections whose peers closed, at most ``batchSize`` per loop iteration.
///
/// A teardown costs tens of microseconds, most of it the kernel's TCP teardown inside `close`. When
/// thousands of peers leave at once (a fleet of accessories stopping, a network coming back) their
/// ends of input arrive in one poll, and tearing each down there kept the loop from polling for a
/// quarter of a second at 10,000 (bench/RESULTS.md): every other peer's calls waited that long.
/// Past a batch in one iteration, the rest wait in a queue taken a batch at a time from a timer,
/// and the loop polls between batches. Loop thread only.
final class TeardownQueue {
    static let batchSize = 256

    private let loop: EventLoop
    /// Teardowns still allowed in this iteration before they queue; refilled before each poll.
    private var budget = TeardownQueue.batchSize
    /// Created on first use: the hook that refills the budget, and the timer that takes the queue.
    private var refill: BeforePollHook?
    private var timer: LoopTimer?
    private var waiting: [ServerConnection] = []
    private var head = 0
    private var isClosed = false

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Connections waiting for their teardown.
    var count: Int { waiting.count - head }

    /// Tears `connection` down now, or after the connections queued before it.
    func add(_ connection: ServerConnection) {
        if isClosed { return connection.tearDownAfterPeerClosed() }
        if budget > 0 && count == 0 {
            spendBudget()
            connection.tearDownAfterPeerClosed()
            return
        }
        waiting.append(connection)
        let timer = self.timer ?? LoopTimer(loop: loop)
        self.timer = timer
        guard !timer.isActive else { return }
        // Strong: ``close()`` releases the handles, which breaks the cycle.
        timer.start(after: .milliseconds(1), repeating: .milliseconds(1)) { self.tearDownBatch() }
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

    private func tearDownBatch() {
        let end = min(head + Self.batchSize, waiting.count)
        for connection in waiting[head..<end] { connection.tearDownAfterPeerClosed() }
        head = end
        guard count == 0 else { return }
        waiting = []
        head = 0
        timer?.stop()
    }

    /// Tears down everything queued now and releases the handles (the server has stopped).
    func close() {
        isClosed = true
        for connection in waiting[head...] { connection.tearDownAfterPeerClosed() }
        waiting = []
        head = 0
        timer?.close()
        timer = nil
        refill?.close()
        refill = nil
    }
}
