import Foundation

/// Poisson arrivals at `rate` per second from the start: exponentially distributed gaps, so the
/// offered load has the bursts a population of independent devices and users has.
struct PoissonSchedule {
    let rate: Double
    let start: ContinuousClock.Instant
    private var nextOffset: Double = 0
    private var generator = SystemRandomNumberGenerator()

    init(rate: Double, start: ContinuousClock.Instant = .now) {
        self.rate = rate
        self.start = start
        nextOffset = gap()
    }

    /// The intended starts of the arrivals due by `now`, in order (at most `limit`; the rest stay due).
    mutating func due(by now: ContinuousClock.Instant, limit: Int = 10_000) -> [ContinuousClock.Instant] {
        guard rate > 0 else { return [] }
        let elapsed = start.duration(to: now).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        var starts: [ContinuousClock.Instant] = []
        while nextOffset <= seconds, starts.count < limit {
            starts.append(start.advanced(by: .seconds(nextOffset)))
            nextOffset += gap()
        }
        return starts
    }

    private mutating func gap() -> Double {
        // -ln(U) / rate with U in (0, 1].
        let uniform = Double.random(in: Double.ulpOfOne...1, using: &generator)
        return -log(uniform) / rate
    }
}
