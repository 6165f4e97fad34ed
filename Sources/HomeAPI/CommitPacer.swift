public import HomeService
public import UV

/// Decides when a loop-hosted store's waiting mutations go to the writer thread: install
/// ``commitWaiting()`` as the store's ``HomeStore/onCommitWaiting`` and call ``commitsLanded()``
/// after handing the writer's reports to the store. Loop thread only.
///
/// With no commit in flight, a batch starts once the loop has handled every ready connection (its
/// mutations share the commit). With one in flight, the next waits until it lands, its replies are
/// written, and the loop has polled once more without blocking: the clients just answered have
/// sent their next calls by then, and those join the batch. Started as soon as the writer was free,
/// the next commit took only the calls that had come in during the last one, and the clients split
/// into two cohorts that alternated, each paying a commit: at 50 connections × 1 call on one core,
/// 25 mutations a commit became 38 this way, and the writer's share of the core fell with it. Redis
/// batches its `appendfsync always` fsyncs the same way, once per loop iteration.
public final class CommitPacer {
    private unowned let store: HomeStore
    private let runBeforePolling: (@escaping () -> Void) -> Void
    /// Due at once when started: a due timer makes the loop's next poll return without waiting.
    private let pollOnce: LoopTimer
    private var isWaitingForLanding = false
    private var isClosed = false

    /// - Parameter runBeforePolling: runs a task once, after the replies held for the loop's next
    ///   poll are written, just before that poll (``RPCServer/runBeforePolling(_:)``).
    public init(store: HomeStore, loop: EventLoop, runBeforePolling: @escaping (@escaping () -> Void) -> Void) {
        self.store = store
        self.runBeforePolling = runBeforePolling
        pollOnce = LoopTimer(loop: loop)
    }

    /// The store has mutations waiting for a commit.
    public func commitWaiting() {
        guard !isClosed else { return store.startQueuedCommits() }
        runBeforePolling { [self] in startUnlessOneIsInFlight() }
    }

    /// The store has handled the writer's latest reports.
    public func commitsLanded() {
        guard isWaitingForLanding, !store.hasCommitInFlight else { return }
        isWaitingForLanding = false
        guard !isClosed else { return store.startQueuedCommits() }
        runBeforePolling { [self] in
            // Closed meanwhile (the loop stopped with this task queued): close() started what waits.
            guard !isClosed else { return }
            pollOnce.start(after: .zero) { [self] in startUnlessOneIsInFlight() }
        }
    }

    /// Starts what waits and hands every later batch to the writer at once; releases the timer.
    public func close() {
        isClosed = true
        pollOnce.close()
        store.startQueuedCommits()
    }

    private func startUnlessOneIsInFlight() {
        if store.hasCommitInFlight {
            isWaitingForLanding = true
        } else {
            store.startQueuedCommits()
        }
    }
}
