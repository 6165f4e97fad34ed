import Foundation
import RPCServer
import Synchronization
import UV
import Wire

/// A ``TestServer`` running its loop on its own thread, for clients that live elsewhere (the async
/// client). Observations cross threads through `Mutex`es.
final class BackgroundServer: Sendable {
    let endpoint: Endpoint
    private let stop: Waker<Bool>
    private let finished = DispatchSemaphore(value: 0)
    /// Calls to `hang` seen by the server thread.
    let hangs = HangCounts()

    init() throws {
        let ready = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var made: (Endpoint, Waker<Bool>)?
        nonisolated(unsafe) var failure: (any Error)?
        let hangs = self.hangs
        let finished = self.finished
        let thread = Thread {
            do {
                let test = try TestServer()
                test.onHang = { call in
                    hangs.started.withLock { $0 += 1 }
                    call.onCancel = { hangs.cancelled.withLock { $0 += 1 } }
                }
                // The waker keeps the loop alive, so the drain's completion stops the loop.
                let stop = try Waker<Bool>(loop: test.loop) { _ in
                    test.server.beginGracefulShutdown { test.loop.stop() }
                }
                made = (test.endpoint, stop)
                ready.signal()
                test.loop.run()
                stop.close()
                for timer in test.timers { timer.close() }
                try test.loop.close()
            } catch {
                failure = error
                ready.signal()
            }
            finished.signal()
        }
        thread.start()
        ready.wait()
        if let failure { throw failure }
        (endpoint, stop) = made!
    }

    /// Drains the server and waits for its thread to finish.
    func shutDown() {
        stop.send(true)
        finished.wait()
    }
}

/// Counts of `hang` calls, written on the server thread and read by tests.
final class HangCounts: Sendable {
    let started = Mutex(0)
    /// Cancelled by the client or by their deadline.
    let cancelled = Mutex(0)
}
