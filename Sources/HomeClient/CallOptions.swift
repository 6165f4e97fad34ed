import Foundation

/// Options for the calls a task makes, set for a scope as the trace id is:
///
/// ```swift
/// let key = request.id.uuidString   // the service's own request: its retries reuse it
/// try await HomeClient.$callOptions.withValue(CallOptions(timeout: .seconds(2), idempotencyKey: key)) {
///     _ = try await client.home(homeID).addRoom(named: "Study")
/// }
/// ```
///
/// Task-local, so concurrent requests sharing one client keep their own.
public struct CallOptions: Sendable {
    /// The whole call's time, from when it is made: connecting, every retry and the server's own
    /// deadline for each attempt fit in it. `nil`: the client's `timeout`.
    public var timeout: Duration?
    /// The idempotency key of a mutation made in the scope (instead of a fresh one), kept across
    /// every retry: a service that retries its own request with the same key has the change applied
    /// once (docs/API.md, "Retries and idempotency keys"). One mutation per key: another request
    /// under a used key fails with INVALID_ARGUMENT.
    public var idempotencyKey: String?
    /// Metadata sent with each call, beside what the SDK sends (`authorization`, `trace-id`,
    /// `idempotency-key`).
    public var metadata: [(key: String, value: String)]

    /// Options as the properties above describe them; by default, the client's.
    public init(timeout: Duration? = nil, idempotencyKey: String? = nil, metadata: [(key: String, value: String)] = [])
    {
        self.timeout = timeout
        self.idempotencyKey = idempotencyKey
        self.metadata = metadata
    }
}

/// How a mutation is retried after a failure that left it unapplied or applied once (a transport
/// failure, a drain): the same idempotency key each time, so the change is applied at most once.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included (1: never retried).
    public var maxAttempts: Int
    /// The wait before the first retry.
    public var initialBackoff: Duration
    /// The longest wait between two attempts.
    public var maxBackoff: Duration
    /// How much longer each wait is than the one before.
    public var multiplier: Double
    /// Whether each wait is drawn at random between half the backoff and the whole (so that
    /// clients that failed together do not retry together).
    public var jitter: Bool

    /// A policy as the properties above describe it (`maxAttempts` below 1 counts as 1).
    public init(
        maxAttempts: Int,
        initialBackoff: Duration = .milliseconds(100),
        maxBackoff: Duration = .seconds(5),
        multiplier: Double = 2,
        jitter: Bool = true
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// Four attempts, 100 ms doubling, jittered.
    public static let standard = RetryPolicy(maxAttempts: 4)
    /// One attempt.
    public static let never = RetryPolicy(maxAttempts: 1)

    /// The wait before retry `retry` (1 for the first).
    func backoff(beforeRetry retry: Int) -> Duration {
        let factor = pow(multiplier, Double(retry - 1))
        let whole = min(maxBackoff, initialBackoff * factor)
        guard jitter else { return whole }
        return whole * Double.random(in: 0.5...1)
    }
}
