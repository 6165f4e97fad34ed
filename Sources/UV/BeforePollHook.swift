import CLibUV

/// Runs a closure once per loop iteration, just before the loop polls for I/O (a libuv prepare
/// handle): the place for work that should happen once for everything an iteration's callbacks
/// did. It does not keep the loop running by itself.
///
/// Ownership follows ``LoopTimer``: libuv holds the hook until its close callback.
public final class BeforePollHook {
    public let loop: EventLoop
    let handle: UnsafeMutablePointer<uv_prepare_t>
    private var body: (() -> Void)?
    private var lifecycle = HandleLifecycle()
    public var isClosed: Bool { lifecycle.isClosed }
    /// Whether ``close()`` was called: the body will not run again.
    public var isClosingOrClosed: Bool { lifecycle.isClosing || lifecycle.isClosed }

    /// - Parameter running: whether `body` runs from the next iteration on; else from ``start()``.
    public init(loop: EventLoop, running: Bool = true, _ body: @escaping () -> Void) {
        loop.assertOnLoopThread()
        self.loop = loop
        self.body = body
        handle = .allocate(capacity: 1)
        // uv_prepare_init cannot fail.
        precondition(uv_prepare_init(loop.loop, handle) == 0)
        retainWhileOpen(handle.asHandle)
        if running { uv_prepare_start(handle, Trampolines.aboutToPoll) }
        uv_unref(handle.asHandle)
    }

    /// Runs the body before every poll from now on (until ``stop()``); idempotent.
    public func start() {
        guard !isClosingOrClosed else { return }
        uv_prepare_start(handle, Trampolines.aboutToPoll)
    }

    /// Stops running the body, until ``start()``; idempotent. A hook with nothing to do costs each
    /// loop iteration a callback otherwise.
    public func stop() {
        guard !isClosingOrClosed else { return }
        uv_prepare_stop(handle)
    }

    deinit {
        precondition(isClosed, "a BeforePollHook must be closed before it is released")
    }

    func run() {
        body?()
    }

    /// Stops and closes the hook; idempotent.
    public func close() {
        lifecycle.close(handle.asHandle, on: loop)
    }
}

extension BeforePollHook: HandleOwner {
    func handleDidClose() {
        let retained = lifecycle.finish(handle)
        body = nil
        releaseOwner(retained)
    }
}
