import CLibUV

/// A one-shot or repeating timer on an ``EventLoop`` (named to avoid Foundation's `Timer`).
///
/// Ownership follows ``Connection``: libuv holds the timer until its close callback.
public final class LoopTimer {
    public let loop: EventLoop
    let handle: UnsafeMutablePointer<uv_timer_t>
    private var handler: (() -> Void)?
    private var lifecycle = HandleLifecycle()
    public var isClosed: Bool { lifecycle.isClosed }

    public init(loop: EventLoop) {
        loop.assertOnLoopThread()
        self.loop = loop
        handle = .allocate(capacity: 1)
        // uv_timer_init cannot fail.
        precondition(uv_timer_init(loop.loop, handle) == 0)
        retainWhileOpen(handle.asHandle)
    }

    deinit {
        precondition(isClosed, "a LoopTimer must be closed before it is released")
    }

    /// Calls `handler` after `delay`, then every `interval` if one is given; restarts a running timer.
    public func start(after delay: Duration, repeating interval: Duration? = nil, _ handler: @escaping () -> Void) {
        loop.assertOnLoopThread()
        precondition(!lifecycle.isClosing, "timer used after close")
        self.handler = handler
        uv_timer_start(
            handle,
            Trampolines.timerFired,
            delay.wholeMillisecondsRoundedUp,
            interval?.wholeMillisecondsRoundedUp ?? 0
        )
    }

    /// Stops the timer; ``start(after:repeating:_:)`` may start it again.
    public func stop() {
        loop.assertOnLoopThread()
        guard !lifecycle.isClosing else { return }
        uv_timer_stop(handle)
    }

    /// Whether the timer will fire again.
    public var isActive: Bool { !lifecycle.isClosing && uv_is_active(handle.asHandle) != 0 }

    func fire() {
        handler?()
    }

    /// Stops and closes the timer; idempotent.
    public func close() {
        lifecycle.close(handle.asHandle, on: loop)
    }
}

extension LoopTimer: HandleOwner {
    func handleDidClose() {
        let retained = lifecycle.finish(handle)
        handler = nil
        releaseOwner(retained)
    }
}
