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

/// A server that answers nothing: it accepts connections and, with `handshakes`, sends its preface
/// and SETTINGS, then reads everything and answers nothing, PINGs included (a server whose process
/// hangs, or a path that silently drops); without, it does not even answer the handshake (a hung
/// server, another service on the port). Its loop runs on a thread of its own.
final class MuteServer: Sendable {
    let endpoint: Endpoint
    private let stop: Waker<Bool>
    private let finished = DispatchSemaphore(value: 0)

    private final class Mute: ListenerDelegate, ConnectionDelegate {
        let handshakes: Bool
        let hangsUp: Bool
        var connections: [Connection] = []

        init(handshakes: Bool, hangsUp: Bool) {
            self.handshakes = handshakes
            self.hangsUp = hangsUp
        }

        func listener(_ listener: Listener, didAccept connection: Connection) {
            connections.append(connection)
            connection.delegate = self
            guard handshakes else { return }
            var hello: [UInt8] = []
            FrameEncoder.encode(.preface(Preface()), into: &hello)
            FrameEncoder.encode(.settings(Settings()), into: &hello)
            try? connection.write(hello)
            if hangsUp { return connection.closeWhenWritesFlushed() }
            try? connection.startReading()
        }
        func listener(_ listener: Listener, didFailToAccept error: UVError) {}
        func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {}
        func connectionDidClose(_ connection: Connection, error: UVError?) {
            connections.removeAll { $0 === connection }
        }
    }

    /// With `handshakes`, it answers the handshake (and then says nothing); with `hangsUp` too, it
    /// closes the connection right after.
    init(handshakes: Bool, hangsUp: Bool = false) throws {
        let ready = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var made: Result<(Endpoint, Waker<Bool>), any Error>?
        let finished = self.finished
        Thread {
            do {
                let loop = try EventLoop()
                let mute = Mute(handshakes: handshakes, hangsUp: hangsUp)
                let listener = try Listener.listen(on: .tcp(host: "127.0.0.1", port: 0), loop: loop, delegate: mute)
                let stop = try Waker<Bool>(loop: loop) { _ in
                    listener.close()
                    for connection in mute.connections { connection.close() }
                    loop.stop()
                }
                made = .success((listener.endpoint, stop))
                ready.signal()
                loop.run()
                stop.close()
                try loop.close()
            } catch {
                made = made ?? .failure(error)
                ready.signal()
            }
            finished.signal()
        }.start()
        ready.wait()
        (endpoint, stop) = try made!.get()
    }

    /// Closes the server and waits for its thread to finish.
    func shutDown() {
        stop.send(true)
        finished.wait()
    }
}
