import CLibUV

/// Notices loop iterations that spend longer than a threshold in callbacks before polling again:
/// while one runs, no other connection is read, written or timed. Each iteration's busy time is its
/// length (the loop's cached time, so no clock read of its own; millisecond resolution) minus the
/// time it waited in poll (libuv's idle-time metric, which reads the clock around each poll: about
/// 5% more instructions per call at one call per iteration, so servers leave it off by default).
public final class LoopStallWatch {
    private let hook: BeforePollHook
    /// Iterations that were busy for at least the threshold.
    public var stallCount: Int { state.stallCount }
    /// The busiest iteration seen.
    public var longestStall: Duration { state.longestStall }
    public var isClosed: Bool { hook.isClosed }
    private let state: State

    private final class State {
        let loop: UnsafeMutablePointer<uv_loop_t>
        let thresholdNanoseconds: UInt64
        let onStall: (Duration) -> Void
        var lastIterationStart: UInt64
        var lastIdleTime: UInt64
        var stallCount = 0
        var longestStall: Duration = .zero

        init(loop: UnsafeMutablePointer<uv_loop_t>, threshold: Duration, onStall: @escaping (Duration) -> Void) {
            self.loop = loop
            thresholdNanoseconds = threshold.wholeMicroseconds * 1000
            self.onStall = onStall
            // Measuring idle time cannot fail once the loop exists; it adds a clock read per poll.
            precondition(homerpc_uv_measure_idle_time(loop) == 0)
            // The cached time is from the loop's last iteration (or its creation): start from now.
            uv_update_time(loop)
            lastIterationStart = uv_now(loop) * 1_000_000
            lastIdleTime = uv_metrics_idle_time(loop)
        }

        func aboutToPoll() {
            let now = uv_now(loop) * 1_000_000
            let idle = uv_metrics_idle_time(loop)
            let elapsed = now &- lastIterationStart
            let waited = idle &- lastIdleTime
            lastIterationStart = now
            lastIdleTime = idle
            let busy = elapsed > waited ? elapsed - waited : 0
            guard busy >= thresholdNanoseconds else { return }
            let duration = Duration.nanoseconds(Int64(busy))
            stallCount += 1
            longestStall = max(longestStall, duration)
            onStall(duration)
        }
    }

    /// Starts watching; `onStall` gets the busy time of each iteration at or above `threshold`.
    public init(loop: EventLoop, threshold: Duration, onStall: @escaping (Duration) -> Void) {
        let state = State(loop: loop.loop, threshold: threshold, onStall: onStall)
        self.state = state
        hook = BeforePollHook(loop: loop) { state.aboutToPoll() }
    }

    /// Stops watching; idempotent.
    public func close() {
        hook.close()
    }
}
