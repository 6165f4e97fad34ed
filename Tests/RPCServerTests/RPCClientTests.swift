import Synchronization
import TestSupport
import Testing
import UV
import Wire

@testable import RPCClient

/// The async/await client against a server on another thread.
@Suite(.timeLimit(.minutes(2))) struct RPCClientTests {
    @Test func unaryCallsFromManyTasksShareOneConnection() async throws {
        let server = try BackgroundServer()
        let client = try await RPCClient.connect(to: server.endpoint)
        let correct = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<1000 {
                group.addTask {
                    let request = bigEndianBytes(UInt32(index))
                    return try await client.unary(TestServer.echo, request: request) == request
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(correct == 1000)
        await client.close()
        server.shutDown()
    }

    /// The callback form: each completion runs once with its own call's answer, errors included,
    /// and a closed client completes at once with UNAVAILABLE.
    @Test func unaryWithoutWaitingCompletesEachCallOnce() async throws {
        let server = try BackgroundServer()
        let client = try await RPCClient.connect(to: server.endpoint)
        let results = await withCheckedContinuation { (continuation: CheckedContinuation<[Int: Bool], Never>) in
            let collected = Mutex<[Int: Bool]>([:])
            for index in 0..<201 {
                let request = bigEndianBytes(UInt32(index))
                // Every 50th call names no method: its completion gets the server's error.
                let method = index % 50 == 0 ? "no.such/Method" : TestServer.echo
                client.unary(method, request: request) { result in
                    let correct =
                        index % 50 == 0 ? result.failure?.code == .unimplemented : (try? result.get()) == request
                    let all = collected.withLock { collected -> [Int: Bool]? in
                        #expect(collected[index] == nil, "call \(index) completed twice")
                        collected[index] = correct
                        return collected.count == 201 ? collected : nil
                    }
                    if let all { continuation.resume(returning: all) }
                }
            }
        }
        #expect(results.count == 201 && results.values.allSatisfy { $0 })
        await client.close()
        let closed = await withCheckedContinuation { continuation in
            client.unary(TestServer.echo, request: []) { continuation.resume(returning: $0.failure?.code) }
        }
        #expect(closed == .unavailable)
        server.shutDown()
    }

    @Test func serverErrorsArriveAsRPCError() async throws {
        let server = try BackgroundServer()
        let client = try await RPCClient.connect(to: server.endpoint)
        await #expect(throws: RPCError.self) { _ = try await client.unary("no.such/Method", request: []) }
        do {
            _ = try await client.unary("no.such/Method", request: [])
        } catch {
            #expect(error.code == .unimplemented)
        }
        await client.close()
        server.shutDown()
    }

    /// One answer is one frame: a client takes answers up to the protocol's largest frame, 16 MiB (a
    /// whole home at the server's limit of 10,000 lamps is about 9 MB), past the server's 8 MiB
    /// ceiling of other unsent output. One byte more is refused, and the connection goes on.
    @Test func anAnswerOfTheLargestFrameArrivesAndOneByteMoreIsRefused() async throws {
        let server = try BackgroundServer()
        let client = try await RPCClient.connect(to: server.endpoint)
        func large(_ size: Int) async throws(RPCError) -> [UInt8] {
            try await client.unary(TestServer.large, request: withUnsafeBytes(of: UInt32(size).bigEndian) { Array($0) })
        }
        let size = WireLimits.maximumMaxFrameSize
        let answer = try await large(size)
        #expect(answer.count == size && answer.allSatisfy { $0 == 0x4C })
        do {
            _ = try await large(size + 1)
            Issue.record("expected RESOURCE_EXHAUSTED")
        } catch {
            #expect(error.code == .resourceExhausted)
            #expect(error.message == "response of \(size + 1) bytes exceeds the peer's max frame size \(size)")
        }
        #expect(try await client.unary(TestServer.echo, request: [5]) == [5])
        await client.close()
        server.shutDown()
    }

    @Test func aServerThatNeverAnswersTheHandshakeFailsTheConnect() async throws {
        let server = try MuteServer(handshakes: false)
        var configuration = ClientConnection.Configuration()
        configuration.handshakeTimeout = .milliseconds(200)
        do {
            _ = try await RPCClient.connect(to: server.endpoint, configuration: configuration)
            Issue.record("connected to a server that never answered")
        } catch {
            #expect(error.code == .unavailable)
            #expect(error.message == "\(server.endpoint) did not answer the handshake within 200 ms")
        }
        server.shutDown()
    }

    /// A server that hangs up right after its handshake (as a killed one does): the connection is
    /// no longer open, and a call started on it fails before `unary` returns. It used to be written
    /// to the closed socket and wait for an answer for ever.
    @Test func aCallStartedAfterTheServerHungUpFailsAtOnce() throws {
        let server = try MuteServer(handshakes: true, hangsUp: true)
        defer { server.shutDown() }
        let loop = try EventLoop()
        var client: ClientConnection?
        var closed = false
        try ClientConnection.connect(to: server.endpoint, on: loop) { result in
            client = try? result.get()
            client?.onClose = { _ in closed = true }
            if client == nil { closed = true }
        }
        loop.run(until: { closed })
        let connection = try #require(client)
        #expect(!connection.isOpen)
        var outcome: Result<[UInt8], RPCError>?
        connection.unary(TestServer.echo, request: [1]) { outcome = $0 }
        let error = try #require(outcome?.failure, "the call did not fail before unary returned")
        #expect(error.code == .unavailable)
        #expect(error.message == "server closed the connection")
        try loop.close()
    }

    /// A server gone quiet after the handshake: the client's keepalive PING goes unanswered, and a
    /// call without deadline ends instead of waiting for ever.
    @Test func aServerThatGoesQuietEndsCallsByTheClientsKeepalive() async throws {
        let server = try MuteServer(handshakes: true)
        var configuration = ClientConnection.Configuration()
        configuration.keepaliveInterval = .milliseconds(200)
        configuration.keepaliveTimeout = .milliseconds(200)
        let client = try await RPCClient.connect(to: server.endpoint, configuration: configuration)
        do {
            _ = try await client.unary(TestServer.echo, request: [1])
            Issue.record("a quiet server answered")
        } catch {
            #expect(error.code == .unavailable)
            #expect(error.message == "keepalive timeout: nothing from the server for 200 ms after a PING")
        }
        await client.close()
        server.shutDown()
    }

    /// A server gone quiet with the keepalive off: each call ends by its own deadline (a second
    /// after it, the server's grace), the shorter first, however many calls share the connection's
    /// one deadline timer, and calls started later still get theirs.
    @Test func aServerThatGoesQuietEndsCallsByTheirDeadlines() async throws {
        let server = try MuteServer(handshakes: true)
        var configuration = ClientConnection.Configuration()
        configuration.keepaliveInterval = nil
        let client = try await RPCClient.connect(to: server.endpoint, configuration: configuration)
        let start = ContinuousClock.now
        var ended: [Int] = []
        await withTaskGroup(of: Int?.self) { group in
            for timeout in [900, 100, 500] {
                group.addTask {
                    do throws(RPCError) {
                        _ = try await client.unary(TestServer.echo, request: [1], timeout: .milliseconds(timeout))
                        Issue.record("a quiet server answered")
                        return nil
                    } catch {
                        #expect(error.code == .deadlineExceeded)
                        #expect(error.message == "no answer before the deadline")
                        #expect(ContinuousClock.now - start >= .milliseconds(timeout + 1000))
                        return timeout
                    }
                }
            }
            for await timeout in group { ended.append(contentsOf: timeout.map { [$0] } ?? []) }
        }
        #expect(ended == [100, 500, 900])
        do {
            _ = try await client.unary(TestServer.echo, request: [2], timeout: .milliseconds(10))
            Issue.record("a quiet server answered")
        } catch {
            #expect(error.code == .deadlineExceeded)
        }
        await client.close()
        server.shutDown()
    }

    @Test func taskCancellationCancelsTheCallOnTheServer() async throws {
        let server = try BackgroundServer()
        let client = try await RPCClient.connect(to: server.endpoint)
        let task = Task { try await client.unary(TestServer.hang, request: []) }
        while server.hangs.started.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        let result = await task.result
        #expect((result.failure as? RPCError)?.code == .cancelled)
        while server.hangs.cancelled.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(server.hangs.cancelled.withLock { $0 } == 1)
        // The connection still works.
        #expect(try await client.unary(TestServer.echo, request: [5]) == [5])
        await client.close()
        server.shutDown()
    }

    /// Stream ids never repeat on a connection: after the last one (2^32 − 1) a call is not sent
    /// and fails UNAVAILABLE, retryable, instead of the id wrapping to 0 (a protocol error) or the
    /// client trapping on the overflow. The calls already open finish, and then the server closes
    /// the connection (the client's GOAWAY after its last call).
    @Test func aConnectionThatUsedEveryStreamIDSendsNoMoreCalls() async throws {
        let server = try BackgroundServer()
        var configuration = ClientConnection.Configuration()
        configuration.firstStreamID = UInt32.max - 1
        let client = try await RPCClient.connect(to: server.endpoint, configuration: configuration)
        let open = client.serverStream(TestServer.count, request: bigEndianBytes(10_000))  // 2^32 − 2
        #expect(try await client.unary(TestServer.echo, request: bigEndianBytes(7)) == bigEndianBytes(7))  // the last
        await #expect(throws: RPCError.streamIDsExhausted) {
            try await client.unary(TestServer.echo, request: [])
        }
        var received: UInt32 = 0
        for try await message in open {
            #expect(message == bigEndianBytes(received))
            received += 1
        }
        #expect(received == 10_000)
        var afterwards = RPCError.streamIDsExhausted
        for _ in 0..<500 where afterwards == .streamIDsExhausted {
            do {
                _ = try await client.unary(TestServer.echo, request: [])
            } catch {
                afterwards = error
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(afterwards == .clientClosed, "the server did not close the connection after its last call")
        await client.close()
        server.shutDown()
    }

    @Test func timeoutBecomesDeadlineExceeded() async throws {
        let server = try BackgroundServer()
        let client = try await RPCClient.connect(to: server.endpoint)
        do {
            _ = try await client.unary(TestServer.hang, request: [], timeout: .milliseconds(80))
            Issue.record("expected DEADLINE_EXCEEDED")
        } catch {
            #expect(error.code == .deadlineExceeded)
        }
        // The server ended the call itself: its handler was cancelled by the deadline.
        while server.hangs.cancelled.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(server.hangs.cancelled.withLock { $0 } == 1)
        await client.close()
        server.shutDown()
    }

    @Test func streamIsAnAsyncSequenceInOrder() async throws {
        let server = try BackgroundServer()
        let client = try await RPCClient.connect(to: server.endpoint)
        var expected: UInt32 = 0
        for try await message in client.serverStream(TestServer.count, request: bigEndianBytes(100_000)) {
            #expect(message == bigEndianBytes(expected))
            expected += 1
        }
        #expect(expected == 100_000)
        await client.close()
        server.shutDown()
    }

    @Test func leavingAStreamEarlyCancelsIt() async throws {
        let server = try BackgroundServer()
        let client = try await RPCClient.connect(to: server.endpoint)
        var taken = 0
        for try await _ in client.serverStream(TestServer.count, request: bigEndianBytes(1_000_000)) {
            taken += 1
            if taken == 10 { break }
        }
        // The server stopped: the same connection answers promptly.
        #expect(try await client.unary(TestServer.echo, request: [1]) == [1])
        await client.close()
        server.shutDown()
    }

    /// The callback form: every message in order on the loop thread, then one end with OK; a
    /// cancelled stream ends once with CANCELLED and the connection goes on; a closed client ends
    /// a new stream at once with UNAVAILABLE.
    @Test func streamWithCallbacksDeliversInOrderAndEndsOnce() async throws {
        let server = try BackgroundServer()
        let client = try await RPCClient.connect(to: server.endpoint)
        struct Tally: Sendable {
            var next: UInt32 = 0
            var inOrder = true
            var ends: [RPCError?] = []
        }
        func run(_ count: UInt32, cancelAfter: UInt32? = nil) async -> Tally {
            let tally = Mutex(Tally())
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let call = Mutex<StreamingCall?>(nil)
                let started = client.serverStream(
                    TestServer.count,
                    request: bigEndianBytes(count),
                    onMessage: { message in
                        let taken = tally.withLock { tally -> UInt32 in
                            tally.inOrder = tally.inOrder && message == bigEndianBytes(tally.next)
                            tally.next += 1
                            return tally.next
                        }
                        if taken == cancelAfter { call.withLock { $0 }?.cancel() }
                    },
                    onEnd: { error in
                        let first = tally.withLock { tally in
                            tally.ends.append(error)
                            return tally.ends.count == 1
                        }
                        if first { done.resume() }
                    }
                )
                call.withLock { $0 = started }
            }
            // A second end would come right after the first.
            try? await Task.sleep(for: .milliseconds(50))
            return tally.withLock { $0 }
        }

        let whole = await run(100_000)
        #expect(whole.next == 100_000 && whole.inOrder)
        #expect(whole.ends.count == 1 && whole.ends[0] == nil)

        let cancelled = await run(1_000_000, cancelAfter: 10)
        #expect(cancelled.next >= 10 && cancelled.next < 1_000_000 && cancelled.inOrder)
        #expect(cancelled.ends.count == 1 && cancelled.ends[0]?.code == .cancelled)
        #expect(try await client.unary(TestServer.echo, request: [1]) == [1])

        await client.close()
        let afterClose = await run(10)
        #expect(afterClose.next == 0 && afterClose.ends.count == 1 && afterClose.ends[0]?.code == .unavailable)
        server.shutDown()
    }

    @Test func connectingToNothingFailsWithUnavailable() async throws {
        do {
            _ = try await RPCClient.connect(to: .unix(path: "/tmp/homerpc-no-such-socket"))
            Issue.record("expected a failure")
        } catch {
            #expect(error.code == .unavailable)
        }
    }

    @Test func callsAfterCloseFailWithUnavailable() async throws {
        let server = try BackgroundServer()
        let client = try await RPCClient.connect(to: server.endpoint)
        await client.close()
        do {
            _ = try await client.unary(TestServer.echo, request: [])
            Issue.record("expected a failure")
        } catch {
            #expect(error.code == .unavailable)
        }
        server.shutDown()
    }
}

extension Result {
    /// The error of a failed result; `nil` for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
