/// One finished call, as a ``CallObserver`` sees it: for metrics (calls by method and status, their
/// latency, retries) or an audit log.
public struct CallRecord: Sendable {
    /// The full method name, e.g. `home.v1.HomeService/AddRoom`.
    public var method: String
    /// How it ended: `.ok`, or the failure's status.
    public var status: StatusCode
    /// The failure, when it failed.
    public var error: HomeClientError?
    /// From the call to its answer: connecting, every attempt and every wait between them.
    public var duration: Duration
    /// Attempts in all, the first included: a mutation retried under its idempotency key, or a call
    /// sent again because its connection had closed before it left.
    public var attempts: Int
    /// The mutation's idempotency key (`nil` for a read).
    public var idempotencyKey: String?
}

/// Sees every call a ``HomeClient`` makes when it finishes, on the task that made it. Keep it quick
/// and non-blocking (count, record, enqueue): the caller waits for it.
///
/// ```swift
/// struct CallCounter: CallObserver {
///     let metrics: MyMetrics
///     func callFinished(_ call: CallRecord) {
///         metrics.count(method: call.method, status: call.status.name, seconds: call.duration)
///     }
/// }
/// let client = HomeClient(endpoint: endpoint, token: token, observer: CallCounter(metrics: metrics))
/// ```
public protocol CallObserver: Sendable {
    /// Called once for every call, when it has answered or failed for good.
    func callFinished(_ call: CallRecord)
}
