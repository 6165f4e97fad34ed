import CLibUV

/// Calls a handler on the loop thread when the process receives a signal (libuv turns the signal into
/// a loop event, so the handler may do anything a loop callback may).
///
/// It does not keep the loop alive (the handle is unreferenced). Ownership follows ``Connection``.
public final class SignalWatcher {
    public let loop: EventLoop
    public let signal: Int32
    let handle: UnsafeMutablePointer<uv_signal_t>
    private var handler: (() -> Void)?
    private var lifecycle = HandleLifecycle()
    public var isClosed: Bool { lifecycle.isClosed }

    /// Starts watching `signal` (e.g. `SIGTERM`).
    public init(signal: Int32, loop: EventLoop, _ handler: @escaping () -> Void) throws(UVError) {
        loop.assertOnLoopThread()
        self.loop = loop
        self.signal = signal
        self.handler = handler
        handle = .allocate(capacity: 1)
        // uv_signal_init fails only if the loop's signal pipe cannot be created.
        let result = uv_signal_init(loop.loop, handle)
        guard result == 0 else {
            handle.deallocate()
            lifecycle.neverOpened()
            throw UVError(code: result)
        }
        retainWhileOpen(handle.asHandle)
        do {
            try uvCheck(uv_signal_start(handle, Trampolines.signalled, signal))
            // A process may start with the signal blocked (children of a thread pool that blocks
            // signals, such as libdispatch's, inherit the mask): then it would never arrive.
            var unblocked = sigset_t()
            sigemptyset(&unblocked)
            sigaddset(&unblocked, signal)
            pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        } catch {
            close()
            throw error
        }
        uv_unref(handle.asHandle)
    }

    deinit {
        precondition(isClosed, "a SignalWatcher must be closed before it is released")
    }

    func fire() {
        handler?()
    }

    /// Stops watching and closes the handle; idempotent.
    public func close() {
        lifecycle.close(handle.asHandle, on: loop)
    }
}

extension SignalWatcher: HandleOwner {
    func handleDidClose() {
        let retained = lifecycle.finish(handle)
        handler = nil
        releaseOwner(retained)
    }
}
