/// Names a commit batch: ``HomeStore/whenCommitted(_:_:)`` calls back once it is durable.
public struct CommitTicket: Hashable, Sendable {
    /// The writer's batch number (0: nothing to wait for).
    let batch: UInt64
}

/// An object told when a batch is committed (``HomeStore/whenCommitted(_:notify:)``).
public protocol CommitObserver: AnyObject {
    /// The batch, and every one before it, is committed (`nil`), or `failure` stopped the store.
    func committed(_ failure: StoreError?)
}
