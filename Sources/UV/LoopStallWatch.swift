import CLibUV

/// Notices loop iterations that spend longer than a threshold in callbacks before polling again:
/// while one runs, no other connection is read, written or timed. Each iteration's busy time is its
/// length minus the time it waited in poll (libuv's idle-time metric).
///
/// Ownership follows ``LoopTimer``: libuv holds the watch until its close callback.
public final class LoopStallWatch {
    public let loop: EventLoop
    let handle: UnsafeMutablePointer<uv_prepare_t>
    private let thresholdNanoseconds: UInt64
    private var onStall: ((Duration) -> Void)?
    private var lastIterationStart: UInt64
    private var lastIdleTime: UInt64
    private var lifecycle = HandleLifecycle()

    /// Iterations that were busy for at least the threshold.
    public private(set) var stallCount = 0
    /// The busiest iteration seen.
    public private(set) var longestStall: Duration = .zero

    /// Starts watching; `onStall` gets the busy time of each iteration at or above `threshold`.
    public init(loop: EventLoop, threshold: Duration, onStall: @escaping (Duration) -> Void) {
        loop.assertOnLoopThread()
        self.loop = loop
        thresholdNanoseconds = threshold.wholeMicroseconds * 1000
        self.onStall = onStall
        // Measuring idle time cannot fail once the loop exists; it adds a clock read per poll.
        precondition(homerpc_uv_measure_idle_time(loop.loop) == 0)
        lastIterationStart = uv_hrtime()
        lastIdleTime = uv_metrics_idle_time(loop.loop)
        handle = .allocate(capacity: 1)
        precondition(uv_prepare_init(loop.loop, handle) == 0)
        retainWhileOpen(handle.asHandle)
        uv_prepare_start(handle, Trampolines.aboutToPoll)
        // A prepare handle alone must not keep the loop running.
        uv_unref(handle.asHandle)
    }

    deinit {
        precondition(isClosed, "a LoopStallWatch must be closed before it is released")
    }

    public var isClosed: Bool { lifecycle.isClosed }

    func aboutToPoll() {
        let now = uv_hrtime()
        let idle = uv_metrics_idle_time(loop.loop)
        let elapsed = now &- lastIterationStart
        let waited = idle &- lastIdleTime
        lastIterationStart = now
        lastIdleTime = idle
        let busy = elapsed > waited ? elapsed - waited : 0
        guard busy >= thresholdNanoseconds else { return }
        let duration = Duration.nanoseconds(Int64(busy))
        stallCount += 1
        longestStall = max(longestStall, duration)
        onStall?(duration)
    }

    /// Stops watching; idempotent.
    public func close() {
        lifecycle.close(handle.asHandle, on: loop)
    }
}

extension LoopStallWatch: HandleOwner {
    func handleDidClose() {
        let retained = lifecycle.finish(handle)
        onStall = nil
        releaseOwner(retained)
    }
}
