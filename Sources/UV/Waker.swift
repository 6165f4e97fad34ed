import CLibUV
import Synchronization

/// Delivers messages from any thread to the loop thread: the one bridge between threads.
///
/// ``send(_:)`` appends to a locked inbox and calls `uv_async_send`, the only libuv call that is safe
/// from another thread. libuv merges wake-ups that arrive before the loop runs the callback
/// (docs/src/async.rst), so the callback drains the whole inbox and hands it to the handler as one batch.
///
/// Thread safety: `send` may be called from any thread, before or after ``close()`` (after, it returns
/// `false` and drops the message). Everything else, and the handler, runs on the loop thread. The lock
/// makes `uv_async_send` and `uv_close` mutually exclusive, so a send never touches a freed handle.
public final class Waker<Message: Sendable>: @unchecked Sendable {
    private struct Inbox {
        var messages: [Message] = []
        var isOpen = true
    }

    let loop: EventLoop
    let handle: UnsafeMutablePointer<uv_async_t>
    private let inbox = Mutex(Inbox())
    private var handler: (([Message]) -> Void)?
    private var lifecycle = HandleLifecycle()

    /// - Parameter handler: runs on the loop thread with every message sent since its last run, in order.
    public init(loop: EventLoop, handler: @escaping ([Message]) -> Void) throws(UVError) {
        loop.assertOnLoopThread()
        self.loop = loop
        self.handler = handler
        handle = .allocate(capacity: 1)
        let result = uv_async_init(loop.loop, handle, Trampolines.woken)
        guard result == 0 else {
            handle.deallocate()
            inbox.withLock { $0.isOpen = false }
            lifecycle.neverOpened()
            throw UVError(code: result)
        }
        retainWhileOpen(handle.asHandle)
    }

    /// Queues `message` for the loop thread and wakes it. Safe from any thread.
    /// - Returns: `false` if the waker is closed and the message was dropped.
    @discardableResult
    public func send(_ message: Message) -> Bool {
        inbox.withLock { inbox in
            guard inbox.isOpen else { return false }
            inbox.messages.append(message)
            uv_async_send(handle)
            return true
        }
    }

    /// ``send(_:)``, except that on the loop thread itself the message is handled at once (after any
    /// still queued, in order) instead of waking the loop for its next iteration: an eventfd write,
    /// a poll and a read saved, about 15 µs of a reply's latency. The handler may then run inside
    /// another of the loop's callbacks, or inside itself when it sends. Safe from any thread.
    /// - Returns: `false` if the waker is closed and the message was dropped.
    @discardableResult
    public func sendOrHandle(_ message: Message) -> Bool {
        guard loop.isOnLoopThread else { return send(message) }
        let queued = inbox.withLock { inbox in
            guard inbox.isOpen else { return false }
            inbox.messages.append(message)
            return true
        }
        if queued { drain() }
        return queued
    }

    func drain() {
        // The inbox's array is taken whole and replaced by an empty one. Emptying it in place
        // (`removeAll(keepingCapacity:)`) ran generic code over its elements, unspecialised from
        // here, or allocated a new buffer while a copy was shared: more than the next send's
        // allocation costs (callgrind, a commit's report a wake).
        var messages: [Message] = []
        inbox.withLock { swap(&$0.messages, &messages) }
        if !messages.isEmpty {
            handler?(messages)
        }
    }

    /// Closes the waker; messages still in the inbox are delivered first. Loop thread only; idempotent.
    public func close() {
        guard !lifecycle.isClosing, !lifecycle.isClosed else { return }
        loop.assertOnLoopThread()
        drain()
        inbox.withLock { inbox in
            inbox.isOpen = false
            lifecycle.close(handle.asHandle, on: loop)
        }
    }
}

extension Waker: HandleOwner {
    func handleDidClose() {
        let retained = lifecycle.finish(handle)
        handler = nil
        releaseOwner(retained)
    }
}

/// Lets the non-generic async callback reach a generic ``Waker``.
protocol Draining: AnyObject {
    func drain()
}

extension Waker: Draining {}
