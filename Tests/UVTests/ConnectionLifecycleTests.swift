import TestSupport
import Testing
import UV

/// Records everything a connection reports.
final class RecordingDelegate: ConnectionDelegate {
    var reads = 0
    var bytesRead = 0
    var reachedEndOfInput = false
    var flushes = 0
    var closes = 0
    var closeError: UVError?
    var onRead: (Connection, Span<UInt8>) -> Void = { _, _ in }
    var onEndOfInput: (Connection) -> Void = { $0.close() }
    var onFlush: (Connection) -> Void = { _ in }
    var onClose: () -> Void = {}

    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        reads += 1
        bytesRead += bytes.count
        onRead(connection, bytes)
    }

    func connectionDidReachEndOfInput(_ connection: Connection) {
        reachedEndOfInput = true
        onEndOfInput(connection)
    }

    func connectionDidFlushWrites(_ connection: Connection) {
        flushes += 1
        onFlush(connection)
    }

    func connectionDidClose(_ connection: Connection, error: UVError?) {
        closes += 1
        closeError = error
        onClose()
    }
}

/// Accepts connections and hands each to a fresh ``RecordingDelegate``.
final class RecordingServer: ListenerDelegate {
    var delegates: [RecordingDelegate] = []
    var startsReading = true
    var configure: (RecordingDelegate) -> Void = { _ in }
    var connections: [Connection] = []

    func listener(_ listener: Listener, didAccept connection: Connection) {
        let delegate = RecordingDelegate()
        configure(delegate)
        delegates.append(delegate)
        connections.append(connection)
        connection.delegate = delegate
        if startsReading {
            #expect(throws: Never.self) { try connection.startReading() }
        }
    }

    func listener(_ listener: Listener, didFailToAccept error: UVError) {
        Issue.record("accept failed: \(error)")
    }
}

@Suite(.timeLimit(.minutes(1))) struct ConnectionLifecycleTests {
    @Test func peerClosingMidMessageLeavesPartialInputAndClosesCleanly() throws {
        let loop = try EventLoop()
        let server = RecordingServer()
        var readers: [ObjectIdentifier: LengthPrefixedReader] = [:]
        var partialAtEndOfInput = -1
        var completeMessages = 0
        server.configure = { delegate in
            let key = ObjectIdentifier(delegate)
            readers[key] = LengthPrefixedReader()
            delegate.onRead = { _, bytes in
                readers[key]!.append(bytes)
                while readers[key]!.nextMessage() != nil { completeMessages += 1 }
            }
            delegate.onEndOfInput = { connection in
                partialAtEndOfInput = readers[key]!.bufferedByteCount
                connection.close()
            }
        }
        let listener = try Listener.listen(on: .tcp(host: "127.0.0.1", port: 0), loop: loop, delegate: server)
        let client = RecordingDelegate()
        // The client half-closes, then closes once the server's close reaches it.
        client.onClose = { loop.stop() }
        try Connection.connect(to: listener.endpoint, on: loop) { result in
            guard case .success(let connection) = result else {
                Issue.record("connect failed")
                return
            }
            connection.delegate = client
            // A header promising 100 bytes, then only 10 of them, then the client goes away.
            #expect(throws: Never.self) { try connection.write([0, 0, 0, 100] + [UInt8](repeating: 1, count: 10)) }
            connection.closeWhenWritesFlushed()
        }
        loop.runForTest()
        #expect(completeMessages == 0)
        #expect(partialAtEndOfInput == 14)
        #expect(server.delegates.count == 1)
        #expect(server.delegates.first?.reachedEndOfInput == true)
        #expect(server.delegates.first?.closes == 1)
        #expect(server.delegates.first?.closeError == nil)
        #expect(client.closes == 1)
        listener.close()
        try loop.close()
    }

    @Test func connectionClosesItselfFromItsOwnReadCallback() throws {
        let loop = try EventLoop()
        let server = RecordingServer()
        server.configure = { delegate in
            delegate.onRead = { connection, _ in connection.close() }
        }
        let listener = try Listener.listen(on: .tcp(host: "127.0.0.1", port: 0), loop: loop, delegate: server)
        let client = RecordingDelegate()
        client.onClose = { loop.stop() }
        try Connection.connect(to: listener.endpoint, on: loop) { result in
            guard case .success(let connection) = result else {
                Issue.record("connect failed")
                return
            }
            connection.delegate = client
            #expect(throws: Never.self) {
                try connection.startReading()
                // Several read buffers' worth, so libuv would read again in the same callback run.
                try connection.write([UInt8](repeating: 0x5A, count: 4 * 64 * 1024))
            }
        }
        loop.runForTest()
        let serverSide = try #require(server.delegates.first)
        #expect(serverSide.reads == 1)
        #expect(serverSide.closes == 1)
        #expect(serverSide.closeError == nil)
        #expect(server.connections.first?.state == .closed)
        // The client sees the server go: end of input, or a reset because its bytes went unread.
        #expect(client.closes == 1)
        #expect(client.closeError == nil || client.closeError == .connectionReset)
        listener.close()
        try loop.close()
    }

    @Test func writesBeyondThePendingCapAreRefusedUntilThePeerReads() throws {
        let loop = try EventLoop()
        let server = RecordingServer()
        server.startsReading = false
        let listener = try Listener.listen(on: .tcp(host: "127.0.0.1", port: 0), loop: loop, delegate: server)
        let client = RecordingDelegate()
        let cap = 1 << 20
        let chunk = [UInt8](repeating: 0xC3, count: 256 * 1024)
        var accepted = 0
        var refusedWhilePending = -1
        client.onFlush = { connection in
            #expect(connection.pendingWriteByteCount == 0)
            connection.close()
        }
        server.configure = { delegate in
            delegate.onEndOfInput = { $0.close() }
            delegate.onClose = { loop.stop() }
        }
        try Connection.connect(to: listener.endpoint, on: loop) { result in
            guard case .success(let connection) = result else {
                Issue.record("connect failed")
                return
            }
            connection.delegate = client
            connection.maxPendingWriteBytes = cap
            // The peer does not read: the kernel's buffers fill, then ours, then writes are refused.
            while true {
                do {
                    try connection.write(chunk)
                    accepted += chunk.count
                } catch {
                    #expect(error as? UVError == .noBufferSpace)
                    refusedWhilePending = connection.pendingWriteByteCount
                    break
                }
                #expect(connection.pendingWriteByteCount <= cap)
            }
            #expect(connection.state == .open)
            // Now let the server read everything.
            #expect(throws: Never.self) { try server.connections.first?.startReading() }
        }
        // The server accepts before the client's connect callback runs only after a loop turn, so start
        // reading from the server side once it exists.
        loop.runForTest()
        #expect(refusedWhilePending > cap - chunk.count && refusedWhilePending <= cap)
        #expect(client.flushes == 1)
        #expect(server.delegates.first?.bytesRead == accepted)
        listener.close()
        try loop.close()
    }

    @Test func closeWhenWritesFlushedDeliversEveryQueuedByte() throws {
        let loop = try EventLoop()
        let server = RecordingServer()
        server.configure = { delegate in
            delegate.onClose = { loop.stop() }
        }
        let listener = try Listener.listen(on: .unix(path: temporarySocketPath()), loop: loop, delegate: server)
        let total = 8 << 20
        try Connection.connect(to: listener.endpoint, on: loop) { result in
            guard case .success(let connection) = result else {
                Issue.record("connect failed")
                return
            }
            connection.delegate = RecordingDelegate()
            connection.maxPendingWriteBytes = 16 << 20
            #expect(throws: Never.self) { try connection.write([UInt8](repeating: 7, count: total)) }
            connection.closeWhenWritesFlushed()
            #expect(throws: UVError.notConnected) { try connection.write([1]) }
        }
        loop.runForTest()
        #expect(server.delegates.first?.bytesRead == total)
        #expect(server.delegates.first?.reachedEndOfInput == true)
        listener.close()
        try loop.close()
    }

    @Test func writingToAPeerThatClosedFailsWithoutKillingTheProcess() throws {
        let loop = try EventLoop()
        let server = RecordingServer()
        server.configure = { delegate in delegate.onRead = { connection, _ in connection.close() } }
        let listener = try Listener.listen(on: .unix(path: temporarySocketPath()), loop: loop, delegate: server)
        let client = RecordingDelegate()
        var writeErrors: [UVError] = []
        client.onEndOfInput = { connection in
            // The server is gone; without SIGPIPE ignored, this write would end the test process.
            for _ in 0..<3 {
                do throws(UVError) { try connection.write([1, 2, 3]) } catch { writeErrors.append(error) }
            }
            connection.close()
        }
        client.onClose = { loop.stop() }
        try Connection.connect(to: listener.endpoint, on: loop) { result in
            guard case .success(let connection) = result else { return }
            connection.delegate = client
            try? connection.startReading()
            try? connection.write([0])
        }
        loop.runForTest()
        #expect(client.closes == 1)
        #expect(!writeErrors.isEmpty || client.closeError != nil)
        #expect(
            (writeErrors.first ?? client.closeError).map { ["EPIPE", "ENOTCONN", "ECONNRESET"].contains($0.name) }
                ?? false
        )
        listener.close()
        try loop.close()
    }

    @Test func connectingToAClosedPortFails() throws {
        let loop = try EventLoop()
        // Bind a port, then close it, so that nobody listens there.
        let listener = try Listener.listen(
            on: .tcp(host: "127.0.0.1", port: 0),
            loop: loop,
            delegate: RecordingServer()
        )
        let endpoint = listener.endpoint
        listener.close()
        var outcome: Result<Connection, UVError>?
        try Connection.connect(to: endpoint, on: loop) { result in
            outcome = result
            loop.stop()
        }
        loop.runForTest()
        guard case .failure(let error) = outcome else {
            Issue.record("expected a failure, got \(String(describing: outcome))")
            return
        }
        #expect(error == .connectionRefused)
        #expect(error.name == "ECONNREFUSED")
        #expect(error.message == "connection refused")
        try loop.close()
    }

    @Test func connectingToAMissingUnixSocketFails() throws {
        let loop = try EventLoop()
        var outcome: Result<Connection, UVError>?
        try Connection.connect(to: .unix(path: temporarySocketPath()), on: loop) { result in
            outcome = result
            loop.stop()
        }
        loop.runForTest()
        guard case .failure(let error) = outcome else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.name == "ENOENT")
        try loop.close()
    }

    @Test func listeningOnATakenPortFails() throws {
        let loop = try EventLoop()
        let first = try Listener.listen(on: .tcp(host: "127.0.0.1", port: 0), loop: loop, delegate: RecordingServer())
        #expect(throws: UVError.addressInUse) {
            _ = try Listener.listen(on: first.endpoint, loop: loop, delegate: RecordingServer())
        }
        first.close()
        try loop.close()
    }

    @Test(arguments: ["localhost", "256.1.1.1", "", "::zz"])
    func hostsThatAreNotIPLiteralsAreRejected(host: String) throws {
        let loop = try EventLoop()
        #expect(throws: UVError.invalidArgument) {
            _ = try Listener.listen(on: .tcp(host: host, port: 0), loop: loop, delegate: RecordingServer())
        }
        var completions = 0
        #expect(throws: UVError.invalidArgument) {
            try Connection.connect(to: .tcp(host: host, port: 80), on: loop) { _ in completions += 1 }
        }
        try loop.close()
        #expect(completions == 0)
    }

    @Test func closingTheLoopClosesWhateverIsStillOpen() throws {
        let loop = try EventLoop()
        let server = RecordingServer()
        let listener = try Listener.listen(on: .tcp(host: "127.0.0.1", port: 0), loop: loop, delegate: server)
        let timer = LoopTimer(loop: loop)
        timer.start(after: .seconds(3600)) {}
        let waker = try Waker<Int>(loop: loop) { _ in }
        var client: Connection?
        try Connection.connect(to: listener.endpoint, on: loop) { result in
            client = try? result.get()
            client?.delegate = RecordingDelegate()
            loop.stop()
        }
        loop.runForTest()
        #expect(client?.state == .open)
        try loop.close()
        #expect(client?.state == .closed)
        #expect(listener.isClosed)
        #expect(timer.isClosed)
        #expect(waker.send(1) == false)
    }
}
