/// Open-loop change production and delivery measurement shared by both fan-out targets.
///
/// Change `k` (from 1) is due at the schedule's `k - 1`th instant; production runs on a 1 ms tick,
/// so it is sent at the first tick after that. Its delivery latency is measured from when it was
/// sent (the change exists from then on; the tick's granularity is the producer's, not the
/// server's). A producer that cannot keep up with the rate shows as fewer changes/s than offered.
final class FanoutMeter {
    /// Deliveries (as completed calls), their latency, failures and the measured window.
    let deliveries = CallMeter()
    private(set) var sent = 0
    private var schedule: OpenLoopSchedule
    /// The next change to send.
    private var nextSequence: UInt64 = 1
    /// When each recent change was sent, by sequence number modulo its size.
    private var sentAt = [ContinuousClock.Instant](repeating: .now, count: 1 << 20)

    init(rate: Double) {
        schedule = OpenLoopSchedule(rate: rate)
    }

    /// Production starts now.
    func begin() {
        schedule = OpenLoopSchedule(rate: schedule.rate)
    }

    /// Sends every change that is due by now, while `send` accepts (it refuses when its connections
    /// have too many writes in flight; those changes go out later, their lateness measured).
    func produce(_ send: (UInt64) -> Bool) {
        let due = schedule.dueCount
        let now = ContinuousClock.now
        while nextSequence <= due, send(nextSequence) {
            sentAt[Int(nextSequence % UInt64(sentAt.count))] = now
            nextSequence += 1
            if deliveries.isMeasuring { sent += 1 }
        }
    }

    /// A subscriber received change `sequence`.
    func delivered(_ sequence: UInt64) {
        guard sequence >= 1 else { return }
        deliveries.record(since: sentAt[Int(sequence % UInt64(sentAt.count))])
    }

    func failed() {
        deliveries.failed()
    }
}
