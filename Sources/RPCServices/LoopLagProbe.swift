public import RPCServer
public import UV

/// Measures how late the loop runs a timer: a timer due every ``interval`` records how long after
/// its due time it ran. Lateness is what every connection's next read or write waits: a loop held
/// by a long callback (a stall) shows here without a clock read on any call's path.
public final class LoopLagProbe {
    public static let interval = Duration.milliseconds(250)
    /// A lateness this long or longer counts as a stall.
    public static let stallThreshold = Duration.milliseconds(50)

    private let timer: LoopTimer
    private var due: UInt64 = 0
    /// Each tick's lateness.
    public private(set) var lateness = LatencyHistogram()
    /// Ticks at least ``stallThreshold`` late.
    public private(set) var stalls: UInt64 = 0

    public init(loop: EventLoop) {
        timer = LoopTimer(loop: loop)
    }

    public func start() {
        let interval = UInt64(Self.interval.wholeMicroseconds) * 1000
        due = EventLoop.monotonicNanoseconds + interval
        timer.start(after: Self.interval, repeating: Self.interval) { [unowned self] in
            let now = EventLoop.monotonicNanoseconds
            let late = now > due ? now - due : 0
            lateness.record(microseconds: late / 1000)
            if late >= UInt64(Self.stallThreshold.wholeMicroseconds) * 1000 { stalls += 1 }
            // The next tick is due an interval after this one ran (libuv's repeat does the same).
            due = now + interval
        }
    }

    public func close() {
        timer.close()
    }
}
