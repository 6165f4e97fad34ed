import UV

/// Reconnections after the server went away, as real accessories and apps make them: each after a
/// delay that doubles with every failed attempt up to a cap, spread by random jitter so that
/// thousands of links do not come back in the same millisecond. One timer serves the whole fleet.
final class RetrySchedule {
    /// The first delay, and the longest.
    static let firstDelay = Duration.milliseconds(100)
    static let longestDelay = Duration.seconds(2)
    /// How often due retries are looked for.
    private static let resolution = Duration.milliseconds(10)

    private let timer: LoopTimer
    private var waiting: [(due: ContinuousClock.Instant, action: () -> Void)] = []

    init(loop: EventLoop) {
        timer = LoopTimer(loop: loop)
    }

    /// The delay before retry number `attempt` (0 for the first): `firstDelay` doubled per attempt
    /// up to `longestDelay`, then a random 50–100% of it.
    static func delay(beforeAttempt attempt: Int) -> Duration {
        let doubled = firstDelay * (1 << min(attempt, 16))
        let ceiling = min(doubled, longestDelay)
        return ceiling * Double.random(in: 0.5...1.0)
    }

    /// Runs `action` on the loop after the delay for `attempt`.
    func retry(attempt: Int, _ action: @escaping () -> Void) {
        waiting.append((.now + Self.delay(beforeAttempt: attempt), action))
        guard !timer.isActive, !timer.isClosed else { return }
        timer.start(after: Self.resolution, repeating: Self.resolution) { [self] in runDue() }
    }

    /// Retries not yet run.
    var count: Int { waiting.count }

    private func runDue() {
        let now = ContinuousClock.now
        let due = waiting.filter { $0.due <= now }
        waiting.removeAll { $0.due <= now }
        if waiting.isEmpty { timer.stop() }
        for entry in due { entry.action() }
    }

    /// Drops what is waiting (the fleet is stopping).
    func close() {
        waiting.removeAll()
        timer.close()
    }
}
