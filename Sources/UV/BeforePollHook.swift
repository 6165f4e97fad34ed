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

    public init(loop: EventLoop, _ body: @escaping () -> Void) {
        loop.assertOnLoopThread()
        self.loop = loop
        self.body = body
        handle = .allocate(capacity: 1)
        // uv_prepare_init cannot fail.
        precondition(uv_prepare_init(loop.loop, handle) == 0)
        retainWhileOpen(handle.asHandle)
        uv_prepare_start(handle, Trampolines.aboutToPoll)
        uv_unref(handle.asHandle)
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
