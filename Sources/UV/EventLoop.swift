import CLibUV
import Glibc

/// A libuv event loop and the thread that runs it.
///
/// Every handle (``Listener``, ``Connection``, ``LoopTimer``, ``Waker``) belongs to one loop and may be used
/// only on the thread that runs it; debug builds check this. The one exception is ``Waker/send(_:)``.
///
/// ```swift
/// let loop = try EventLoop()
/// let listener = try Listener(endpoint: .tcp(host: "127.0.0.1", port: 0), loop: loop, delegate: server)
/// loop.run()            // until stop() or nothing is left to do
/// try loop.close()      // closes whatever is still open; fails if libuv still holds something
/// ```
public final class EventLoop {
    /// Size of the read buffer shared by every connection of the loop.
    static let readBufferSize = 64 * 1024

    let loop: UnsafeMutablePointer<uv_loop_t>
    /// libuv reads into this one buffer for every connection: alloc_cb, read() and read_cb run back to
    /// back for one stream, and the bytes are lent to the delegate only during read_cb.
    let readBuffer: UnsafeMutableRawPointer
    /// Where a secured connection's read is opened into (allocated on the first): lent to the
    /// delegate the same way as ``readBuffer``.
    private var plaintextBuffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var ownerThread: pthread_t
    private var isClosed = false

    /// Creates a loop owned by the calling thread until ``run()`` is called from another one.
    public init() throws(UVError) {
        loop = .allocate(capacity: 1)
        do {
            try uvCheck(uv_loop_init(loop))
        } catch {
            loop.deallocate()
            throw error
        }
        readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
        ownerThread = pthread_self()
        // libuv writes with write(2): a peer that has gone away would raise SIGPIPE and kill the process.
        // Ignoring it turns that into an EPIPE error on the write, as Node and Redis do.
        signal(SIGPIPE, SIG_IGN)
    }

    deinit {
        if !isClosed {
            // Best effort: a loop whose handles cannot all close is leaked rather than freed under libuv.
            try? close()
        }
        if isClosed {
            loop.deallocate()
        }
        readBuffer.deallocate()
        plaintextBuffer.deallocate()
    }

    /// The loop's plaintext buffer, grown to at least `byteCount` bytes.
    func plaintextBuffer(atLeast byteCount: Int) -> UnsafeMutableRawBufferPointer {
        if plaintextBuffer.count < byteCount {
            plaintextBuffer.deallocate()
            plaintextBuffer = .allocate(byteCount: byteCount, alignment: 16)
        }
        return plaintextBuffer
    }

    /// Runs the loop on the calling thread until ``stop()`` is called or no handle is active.
    public func run() {
        ownerThread = pthread_self()
        uv_run(loop, UV_RUN_DEFAULT)
    }

    /// Makes ``run()`` return after the current iteration.
    public func stop() {
        assertOnLoopThread()
        uv_stop(loop)
    }

    /// The loop's cached time in milliseconds, updated at the start of each iteration.
    public var now: UInt64 { uv_now(loop) }

    /// A monotonic clock in nanoseconds (libuv's high-resolution time): plain integers, for timings
    /// on hot paths where `ContinuousClock`'s 128-bit `Duration` arithmetic shows in profiles.
    public static var monotonicNanoseconds: UInt64 { uv_hrtime() }

    /// Closes every handle still open, runs the loop until their close callbacks have run, and closes
    /// the loop.
    /// - Throws: `UVError` (`EBUSY`) if libuv still holds a handle or request afterwards.
    public func close() throws(UVError) {
        guard !isClosed else { return }
        assertOnLoopThread()
        uv_walk(loop, Trampolines.closeWalked, nil)
        uv_run(loop, UV_RUN_DEFAULT)
        try uvCheck(uv_loop_close(loop))
        isClosed = true
    }

    /// Whether the calling thread is the one that runs the loop.
    public var isOnLoopThread: Bool { pthread_equal(pthread_self(), ownerThread) != 0 }

    /// Traps in debug builds unless called on the thread that runs the loop.
    public func assertOnLoopThread(file: StaticString = #fileID, line: UInt = #line) {
        assert(
            isOnLoopThread,
            "used off its event loop thread",
            file: file,
            line: line
        )
    }
}
