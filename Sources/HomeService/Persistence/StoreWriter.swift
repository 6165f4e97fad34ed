import Dispatch
import Synchronization

/// What the writer thread reports after each commit.
public struct CommitReport: Sendable {
    /// Every batch numbered up to this one is durable (or, with `failure`, never will be).
    public let committedThrough: UInt64
    /// Set when the commit failed; the writer then refuses everything after it.
    public let failure: StoreError?
    /// Where the commit's time went (`nil` in reports that made no commit).
    public var timing: CommitTiming? = nil
}

/// The one thread that writes the store. Batches queue up while a commit runs; the next commit takes
/// all of them in one transaction (group commit), so a burst of changes costs one fsync, not one each.
final class StoreWriter: Sendable {
    private struct State {
        var queued: [StoreChange] = []
        var lastSubmitted: UInt64 = 0
        var lastCommitted: UInt64 = 0
        var commitScheduled = false
        var failure: StoreError?
    }

    private let backend: any StoreBackend
    private let queue = DispatchQueue(label: "homerpc.store-writer")
    private let state = Mutex(State())
    private let onCommit: @Sendable (CommitReport) -> Void

    /// - Parameter onCommit: called on the writer thread after each commit; hop to the store's thread
    ///   from here (a loop waker) and hand the report to ``HomeStore/handle(_:)``.
    init(backend: any StoreBackend, onCommit: @escaping @Sendable (CommitReport) -> Void) {
        self.backend = backend
        self.onCommit = onCommit
    }

    /// Queues one mutation's changes and returns its batch number. The commit that takes them starts
    /// now, or with `startingCommit: false` at the next ``startCommit()`` (which the caller owes).
    func submit(_ changes: [StoreChange], startingCommit: Bool = true) -> UInt64 {
        let number = state.withLock { state in
            state.lastSubmitted += 1
            if state.queued.isEmpty {
                state.queued = changes
            } else {
                state.queued.append(contentsOf: changes)
            }
            return state.lastSubmitted
        }
        if startingCommit { startCommit() }
        return number
    }

    /// Starts a commit of what is queued, unless one that will take it is already waiting to run.
    func startCommit() {
        let schedule = state.withLock { state in
            guard !state.commitScheduled, !state.queued.isEmpty else { return false }
            state.commitScheduled = true
            return true
        }
        if schedule { queue.async { self.commitQueued() } }
    }

    /// Starts what is queued, blocks until everything submitted so far is committed (or has failed)
    /// and returns where it got.
    func waitForCommits() -> CommitReport {
        startCommit()
        queue.sync {}
        return state.withLock { CommitReport(committedThrough: $0.lastCommitted, failure: $0.failure) }
    }

    private func commitQueued() {
        let (changes, through, earlierFailure) = state.withLock { state in
            defer {
                state.queued = []
                state.commitScheduled = false
            }
            return (state.queued, state.lastSubmitted, state.failure)
        }
        var failure = earlierFailure
        var timing: CommitTiming?
        if failure == nil {
            do {
                timing = try backend.apply(changes)
            } catch {
                failure = .failed(error.description)
            }
        }
        let report = state.withLock { state in
            state.lastCommitted = through
            state.failure = failure
            return CommitReport(committedThrough: through, failure: failure, timing: timing)
        }
        onCommit(report)
    }
}
