import CLibUV

/// Runs a callback once per loop iteration, right after that iteration's I/O callbacks (a libuv check
/// handle). Connections use it to gather everything written during one iteration into one write.
///
/// It does not keep the loop alive (the handle is unreferenced). Ownership follows ``Connection``.
public final class LoopCheck {
    public let loop: EventLoop
    let handle: UnsafeMutablePointer<uv_check_t>
    private var callback: (() -> Void)?
    public private(set) var isClosed = false
    private var isClosing = false

    /// Starts calling `callback` after the I/O phase of every loop iteration.
    public init(loop: EventLoop, _ callback: @escaping () -> Void) {
        loop.assertOnLoopThread()
        self.loop = loop
        self.callback = callback
        handle = .allocate(capacity: 1)
        // uv_check_init and uv_check_start fail only for a null callback.
        precondition(uv_check_init(loop.loop, handle) == 0)
        retainWhileOpen(handle.asHandle)
        precondition(uv_check_start(handle, Trampolines.checked) == 0)
        uv_unref(handle.asHandle)
    }

    deinit {
        precondition(isClosed, "a LoopCheck must be closed before it is released")
    }

    func run() {
        callback?()
    }

    /// Stops and closes the handle; idempotent.
    public func close() {
        guard !isClosing else { return }
        loop.assertOnLoopThread()
        isClosing = true
        uv_close(handle.asHandle, Trampolines.closed)
    }
}

extension LoopCheck: HandleOwner {
    func handleDidClose() {
        let retained = handle.pointee.data
        isClosed = true
        handle.deallocate()
        callback = nil
        releaseOwner(retained)
    }
}
