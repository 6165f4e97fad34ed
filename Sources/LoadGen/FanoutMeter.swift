import Histogram

/// Open-loop change production and delivery measurement shared by both fan-out targets.
///
/// Change `k` (from 1) is due at `start + (k - 1) / rate`; production runs on a 1 ms tick, so it
/// is sent at the first tick after that. Its delivery latency is measured from when it was sent
/// (the change exists from then on; the tick's granularity is the producer's, not the server's).
/// A producer that cannot keep up with the rate shows as fewer changes/s than offered.
final class FanoutMeter {
    let rate: Double
    private(set) var start = ContinuousClock.now
    private(set) var latency = Histogram<UInt64>(
        highestTrackableValue: 60_000_000,
        numberOfSignificantValueDigits: .three
    )
    private(set) var deliveries = 0
    private(set) var sent = 0
    private(set) var errors = 0
    private var isMeasuring = false
    private var measureStart = ContinuousClock.now
    private var measureEnd = ContinuousClock.now
    /// The next change to send.
    private(set) var nextSequence: UInt64 = 1
    /// When each recent change was sent, by sequence number modulo its size.
    private var sentAt = [ContinuousClock.Instant](repeating: .now, count: 1 << 20)

    init(rate: Double) {
        self.rate = rate
    }

    func begin() {
        start = .now
    }

    func startMeasuring() {
        isMeasuring = true
        measureStart = .now
    }

    func stopMeasuring() {
        isMeasuring = false
        measureEnd = .now
    }

    var measuredSeconds: Double {
        let (seconds, attoseconds) = measureStart.duration(to: measureEnd).components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Sends every change that is due by now, while `send` accepts (it refuses when its connections
    /// have too many writes in flight; those changes go out later, their lateness measured).
    func produce(_ send: (UInt64) -> Bool) {
        let elapsed = start.duration(to: .now).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        let due = UInt64(seconds * rate) + 1
        let now = ContinuousClock.now
        while nextSequence <= due, send(nextSequence) {
            sentAt[Int(nextSequence % UInt64(sentAt.count))] = now
            nextSequence += 1
            if isMeasuring { sent += 1 }
        }
    }

    /// A subscriber received change `sequence`.
    func delivered(_ sequence: UInt64) {
        guard isMeasuring, sequence >= 1 else { return }
        deliveries += 1
        let nanoseconds = sentAt[Int(sequence % UInt64(sentAt.count))].duration(to: .now).components
        let micros = max(0, nanoseconds.seconds * 1_000_000 + nanoseconds.attoseconds / 1_000_000_000_000)
        _ = latency.record(UInt64(micros))
    }

    func failed() {
        if isMeasuring { errors += 1 }
    }
}
