import CLibUV

/// The open → closing → closed bookkeeping every handle wrapper shares (see ``HandleOwner``).
///
/// libuv: a handle is closed with `uv_close` exactly once, and its memory may be freed only in the
/// close callback (docs/src/design.rst).
struct HandleLifecycle {
    private(set) var isClosing = false
    private(set) var isClosed = false

    /// Starts closing `handle` unless it is already closing or closed.
    mutating func close(_ handle: UnsafeMutablePointer<uv_handle_t>, on loop: EventLoop) {
        guard !isClosing, !isClosed else { return }
        loop.assertOnLoopThread()
        isClosing = true
        uv_close(handle, Trampolines.closed)
    }

    /// Records a handle that failed to initialise: it was never opened, so there is nothing to close.
    mutating func neverOpened() {
        isClosed = true
    }

    /// In the close callback: frees the handle's memory and returns the owner reference its `data`
    /// held, for the caller to drop last with ``releaseOwner(_:)``.
    mutating func finish<Handle>(_ handle: UnsafeMutablePointer<Handle>) -> UnsafeMutableRawPointer? {
        let retained = UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self).pointee.data
        isClosed = true
        handle.deallocate()
        return retained
    }
}
