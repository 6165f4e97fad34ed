import CLibUV
import Glibc

/// A stretch of loop callbacks that ran too long between two polls.
public struct LoopStall: Sendable, Equatable {
    /// Wall time from one poll to the next, less the time the first waited for events.
    public var busy: Duration
    /// Of that, the time the loop's thread ran on a CPU. The rest it waited: for a core (other
    /// processes or threads had them), for a page, or blocked in a call. A stall mostly off the CPU
    /// is the machine's load, not the loop's work.
    public var onCPU: Duration
}

/// Notices loop iterations that spend longer than a threshold in callbacks before polling again:
/// while they run, no other connection is read, written or timed. Before each poll it reads the
/// clock and the thread's CPU time; the busy time since the previous poll is the time elapsed less
/// what that poll waited (libuv's idle-time metric, which reads the clock around each poll). These
/// reads, the CPU time's a system call, cost every iteration something, so servers leave the watch
/// off by default.
public final class LoopStallWatch {
    private let hook: BeforePollHook
    /// Iterations that were busy for at least the threshold.
    public var stallCount: Int { state.stallCount }
    /// The busiest iteration seen.
    public var longestStall: LoopStall? { state.longestStall }
    public var isClosed: Bool { hook.isClosed }
    private let state: State

    private final class State {
        let loop: UnsafeMutablePointer<uv_loop_t>
        let thresholdNanoseconds: UInt64
        let onStall: (LoopStall) -> Void
        var lastPoll: UInt64
        var lastIdleTime: UInt64
        var lastCPUTime: UInt64
        var stallCount = 0
        var longestStall: LoopStall?

        init(loop: UnsafeMutablePointer<uv_loop_t>, threshold: Duration, onStall: @escaping (LoopStall) -> Void) {
            self.loop = loop
            thresholdNanoseconds = threshold.wholeMicroseconds * 1000
            self.onStall = onStall
            // Measuring idle time cannot fail once the loop exists; it adds a clock read per poll.
            precondition(homerpc_uv_measure_idle_time(loop) == 0)
            lastPoll = uv_hrtime()
            lastIdleTime = uv_metrics_idle_time(loop)
            lastCPUTime = Self.threadCPUTime()
        }

        /// Nanoseconds this thread has run on a CPU.
        static func threadCPUTime() -> UInt64 {
            var time = timespec()
            // Cannot fail for the calling thread's own clock.
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }

        func aboutToPoll() {
            let now = uv_hrtime()
            let idle = uv_metrics_idle_time(loop)
            let cpu = Self.threadCPUTime()
            let elapsed = now &- lastPoll
            let waited = idle &- lastIdleTime
            let ran = cpu &- lastCPUTime
            lastPoll = now
            lastIdleTime = idle
            lastCPUTime = cpu
            let busy = elapsed > waited ? elapsed - waited : 0
            guard busy >= thresholdNanoseconds else { return }
            let stall = LoopStall(busy: .nanoseconds(Int64(busy)), onCPU: .nanoseconds(Int64(min(ran, busy))))
            stallCount += 1
            if stall.busy > longestStall?.busy ?? .zero { longestStall = stall }
            onStall(stall)
        }
    }

    /// Starts watching; `onStall` gets each stretch between polls busy for `threshold` or longer.
    public init(loop: EventLoop, threshold: Duration, onStall: @escaping (LoopStall) -> Void) {
        let state = State(loop: loop.loop, threshold: threshold, onStall: onStall)
        self.state = state
        hook = BeforePollHook(loop: loop) { state.aboutToPoll() }
    }

    /// Stops watching; idempotent.
    public func close() {
        hook.close()
    }
}
