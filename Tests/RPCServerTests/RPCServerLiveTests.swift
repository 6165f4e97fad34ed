import Foundation
import RPCClient
import TestSupport
import Testing
import UV
import Wire

@testable import RPCServer

/// The server through a live socket, driven by the low-level client on the same loop.
@Suite(.timeLimit(.minutes(2))) struct RPCServerLiveTests {
    @Test func answersOneThousandConcurrentUnaryCallsOnOneConnection() throws {
        let test = try TestServer()
        let client = try test.connectClient()
        var answers: [Int: [UInt8]] = [:]
        var failures: [RPCError] = []
        for index in 0..<1000 {
            client.unary(TestServer.echo, request: bigEndianBytes(UInt32(index)) + Array("call \(index)".utf8)) {
                result in
                switch result {
                case .success(let response): answers[index] = response
                case .failure(let error): failures.append(error)
                }
            }
        }
        test.loop.run(until: { answers.count + failures.count == 1000 })
        #expect(failures == [])
        #expect(answers.count == 1000)
        #expect(answers.allSatisfy { $0.value == bigEndianBytes(UInt32($0.key)) + Array("call \($0.key)".utf8) })
        #expect(test.server.metrics.methods[TestServer.echo]?.calls == 1000)
        client.close()
        try test.shutDown()
    }

    /// `runBeforePolling` runs each task once, after the read that queued it, and the tasks a task
    /// queues too; output a task produces is written. Once the server has stopped, tasks run at once.
    @Test func tasksQueuedBeforePollingRunOnceEach() throws {
        let test = try TestServer()
        var answered = 0
        var queuedByATask = 0
        test.onHang = { [unowned test] call in
            test.server.runBeforePolling {
                answered += 1
                test.server.runBeforePolling { queuedByATask += 1 }
                call.respond([1])
            }
        }
        let client = try test.connectClient()
        var responses = 0
        for _ in 0..<3 {
            client.unary(TestServer.hang, request: []) { result in
                if case .success([1]) = result { responses += 1 }
            }
        }
        test.loop.run(until: { responses == 3 })
        #expect(answered == 3)
        #expect(queuedByATask == 3)
        client.close()
        try test.shutDown()
        var ranAfterStop = false
        test.server.runBeforePolling { ranAfterStop = true }
        #expect(ranAfterStop)
    }

    @Test func responsesWrittenInPlaceInterleaveWithCopiedOnes() throws {
        let test = try TestServer()
        var configuration = ClientConnection.Configuration()
        configuration.maxFrameSize = 16_384
        let client = try test.connectClient(configuration: configuration)
        var answers: [Int: Result<[UInt8], RPCError>] = [:]
        let requests = (0..<500).map {
            Array("request \($0) ".utf8) + [UInt8](repeating: UInt8($0 % 256), count: $0 * 7)
        }
        for (index, request) in requests.enumerated() {
            let method = index.isMultiple(of: 2) ? TestServer.reverse : TestServer.echo
            client.unary(method, request: request) { answers[index] = $0 }
        }
        test.loop.run(until: { answers.count == requests.count })
        for (index, request) in requests.enumerated() {
            let expected = index.isMultiple(of: 2) ? Array(request.reversed()) : request
            #expect((try? answers[index]?.get()) == expected, "call \(index)")
        }
        // A response the client's frame limit cannot take ends its call, not the connection.
        var tooLarge: Result<[UInt8], RPCError>?
        client.unary(TestServer.reverse, request: [UInt8](repeating: 1, count: 20_000)) { tooLarge = $0 }
        var after: Result<[UInt8], RPCError>?
        client.unary(TestServer.reverse, request: [1, 2]) { after = $0 }
        test.loop.run(until: { tooLarge != nil && after != nil })
        if case .failure(let error) = tooLarge {
            #expect(error.code == .resourceExhausted)
        } else {
            Issue.record("answered")
        }
        #expect((try? after?.get()) == [2, 1])
        client.close()
        try test.shutDown()
    }

    @Test func servesCallsOverAUnixSocket() throws {
        let test = try TestServer()
        let path = "/tmp/homerpc-rpc-\(getpid())-\(test.loop.now).sock"
        let endpoint = try test.server.listen(on: .unix(path: path))
        var client: ClientConnection?
        try ClientConnection.connect(to: endpoint, on: test.loop) { client = try? $0.get() }
        test.loop.run(until: { client != nil })
        var answer: [UInt8]?
        client?.unary(TestServer.echo, request: [9, 9]) { answer = try? $0.get() }
        test.loop.run(until: { answer != nil })
        #expect(answer == [9, 9])
        client?.close()
        try test.shutDown()
    }

    @Test func servesOneHundredConnectionsOfOneHundredCalls() throws {
        let test = try TestServer()
        var clients: [ClientConnection] = []
        var pendingConnects = 100
        for _ in 0..<100 {
            try ClientConnection.connect(to: test.endpoint, on: test.loop) { result in
                pendingConnects -= 1
                if let client = try? result.get() { clients.append(client) }
            }
        }
        test.loop.run(until: { pendingConnects == 0 })
        #expect(clients.count == 100)
        var correct = 0
        var wrong = 0
        for (clientIndex, client) in clients.enumerated() {
            for call in 0..<100 {
                let request = bigEndianBytes(UInt32(clientIndex * 1000 + call))
                client.unary(TestServer.echo, request: request) { result in
                    if (try? result.get()) == request { correct += 1 } else { wrong += 1 }
                }
            }
        }
        test.loop.run(until: { correct + wrong == 10_000 })
        #expect(correct == 10_000)
        #expect(test.server.connectionCount == 100)
        for client in clients { client.close() }
        try test.shutDown()
    }

    @Test func streamsOneHundredThousandMessagesInOrder() throws {
        let test = try TestServer()
        let client = try test.connectClient()
        var received = 0
        var outOfOrder = 0
        var ended: RPCError??
        client.serverStream(TestServer.count, request: bigEndianBytes(100_000)) { message in
            if message != bigEndianBytes(UInt32(received)) { outOfOrder += 1 }
            received += 1
        } onEnd: { error in
            ended = .some(error)
        }
        test.loop.run(until: { ended != nil })
        #expect(ended == .some(nil))
        #expect(received == 100_000)
        #expect(outOfOrder == 0)
        client.close()
        try test.shutDown()
    }

    @Test func streamWaitsForCreditWhenTheClientGrantsNone() throws {
        let test = try TestServer()
        var configuration = ClientConnection.Configuration()
        configuration.initialStreamCredit = 10
        let client = try test.connectClient(configuration: configuration)
        var received = 0
        var ended = false
        let stream = client.serverStream(TestServer.count, request: bigEndianBytes(25), automaticCredit: false) { _ in
            received += 1
        } onEnd: { _ in
            ended = true
        }
        test.loop.run(until: { received == 10 })
        // Give the server time to (wrongly) send more.
        let pause = LoopTimer(loop: test.loop)
        pause.start(after: .milliseconds(100)) { test.loop.stop() }
        test.loop.runForTest()
        pause.close()
        #expect(received == 10)
        #expect(!ended)
        client.grantCredit(15, on: stream)
        test.loop.run(until: { ended })
        #expect(received == 25)
        client.close()
        try test.shutDown()
    }

    @Test func cancellationFromTheClientReachesTheHandler() throws {
        let test = try TestServer()
        let client = try test.connectClient()
        var outcome: Result<[UInt8], RPCError>?
        let stream = client.unary(TestServer.hang, request: []) { outcome = $0 }
        test.loop.run(until: { test.hangsStarted == 1 })
        client.cancel(stream)
        test.loop.run(until: { test.cancelledHangs == [stream] })
        #expect(test.cancelledHangs == [stream])
        #expect(outcome?.failure?.code == .cancelled)
        // The connection still serves calls.
        var echoed: [UInt8]?
        client.unary(TestServer.echo, request: [42]) { echoed = try? $0.get() }
        test.loop.run(until: { echoed != nil })
        #expect(echoed == [42])
        client.close()
        try test.shutDown()
    }

    @Test func deadlineExpiresOnASlowHandler() throws {
        let test = try TestServer()
        let client = try test.connectClient()
        var outcome: Result<[UInt8], RPCError>?
        let start = test.loop.now
        let stream = client.unary(TestServer.hang, request: [], timeoutMilliseconds: 50) { outcome = $0 }
        test.loop.run(until: { outcome != nil })
        guard case .failure(let error) = outcome else {
            Issue.record("expected DEADLINE_EXCEEDED, got \(String(describing: outcome))")
            return
        }
        #expect(error.code == .deadlineExceeded)
        #expect(test.loop.now - start >= 50)
        // The handler learned of it.
        #expect(test.cancelledHangs == [stream])
        client.close()
        try test.shutDown()
    }

    /// The server's one timer for every call (``CallTimers``): deadlines given in any order expire
    /// in deadline order, none early; calls answered first never expire and leave no timer behind.
    @Test func deadlinesOfManyCallsExpireInTheirOrderOnOneTimer() throws {
        let test = try TestServer()
        var answerNow: Set<StreamID> = []
        test.onHang = { call in if answerNow.contains(call.streamID) { call.respond([1]) } }
        let client = try test.connectClient()
        let start = test.loop.now
        var expired: [(deadline: UInt32, at: UInt64)] = []
        var answered = 0
        var generator = SeededGenerator(seed: 7)
        // Fewer than a connection's 100 concurrent streams.
        let deadlines = (0..<90).map { _ in UInt32.random(in: 20...400, using: &generator) }
        for (index, deadline) in deadlines.enumerated() {
            // Every third call is answered at once; its deadline must never fire.
            let quick = index % 3 == 0
            let stream = client.unary(TestServer.hang, request: [], timeoutMilliseconds: deadline) { result in
                switch result {
                case .success: answered += 1
                case .failure(let error):
                    #expect(error.code == .deadlineExceeded)
                    expired.append((deadline, test.loop.now))
                }
            }
            if quick { answerNow.insert(stream) }
        }
        test.loop.run(until: { expired.count + answered == deadlines.count })
        #expect(answered == deadlines.indices.filter { $0 % 3 == 0 }.count)
        #expect(expired.allSatisfy { $0.at - start >= UInt64($0.deadline) }, "a deadline fired early")
        // In deadline order, but for calls read a few milliseconds apart (a deadline runs from the
        // read that carried its CALL_START).
        #expect(zip(expired, expired.dropFirst()).allSatisfy { $1.deadline + 10 >= $0.deadline }, "out of order")
        #expect(test.server.callTimers.count == 0)
        client.close()
        try test.shutDown()
    }

    @Test func anEndedCallIsReusedOnlyWhenNothingElseHoldsIt() throws {
        let test = try TestServer()
        let client = try test.connectClient()
        var held: [(call: ServerCall, streamID: StreamID)] = []
        var identities: [ObjectIdentifier] = []
        var holdCalls = true
        test.onHang = { call in
            if holdCalls { held.append((call, call.streamID)) }
            identities.append(ObjectIdentifier(call))
            call.respond([UInt8(identities.count)])
        }
        func callInTurn(_ count: Int) {
            for _ in 0..<count {
                var answer: Result<[UInt8], RPCError>?
                client.unary(TestServer.hang, request: []) { answer = $0 }
                test.loop.run(until: { answer != nil })
                #expect((try? answer?.get()) == [UInt8(identities.count)])
            }
        }
        // Calls a handler keeps are never handed to a later call: each stays what it was.
        callInTurn(5)
        #expect(Set(identities).count == 5)
        #expect(held.allSatisfy { $0.call.streamID == $0.streamID && $0.call.hasEnded })
        // Calls nobody keeps are reused.
        holdCalls = false
        identities = []
        callInTurn(5)
        #expect(Set(identities).count < 5)
        #expect(held.allSatisfy { $0.call.streamID == $0.streamID && $0.call.hasEnded })
        client.close()
        try test.shutDown()
    }

    /// Calls answered together away from the read that started them (a commit ends a batch of
    /// writes at once) are kept for the next calls, up to the connection's limit: the next batch
    /// reuses that many of them rather than allocating each again.
    @Test func aBatchOfEndedCallsIsReusedByTheNextBatch() throws {
        final class WeakCall {
            weak var call: ServerCall?
            init(_ call: ServerCall) { self.call = call }
        }
        let test = try TestServer()
        let client = try test.connectClient()
        var pending: [ServerCall] = []
        var started: [WeakCall] = []
        var secondBatch: Set<ObjectIdentifier> = []
        test.onHang = { call in
            pending.append(call)
            started.append(WeakCall(call))
            // Taken while the first batch's kept calls live: an equal identifier is the same call.
            secondBatch.insert(ObjectIdentifier(call))
        }
        let count = ServerConnection.reusableCallLimit + 4
        var keptAfterFirstBatch: [ObjectIdentifier] = []
        for batch in 0..<2 {
            secondBatch = []
            var answers = 0
            for _ in 0..<count { client.unary(TestServer.hang, request: []) { _ in answers += 1 } }
            test.loop.run(until: { pending.count == count })
            for call in pending { call.respond([]) }
            pending = []
            test.loop.run(until: { answers == count })
            if batch == 0 { keptAfterFirstBatch = started.compactMap { $0.call.map(ObjectIdentifier.init) } }
        }
        // After the first batch only the connection held ended calls: as many as its limit, no more.
        #expect(keptAfterFirstBatch.count == ServerConnection.reusableCallLimit)
        #expect(Set(keptAfterFirstBatch).isSubset(of: secondBatch))
        client.close()
        try test.shutDown()
    }

    /// A reused call object keeps a field only when the next call's is the same: each call must
    /// still see its own metadata and deadline, with or without them in the call before.
    @Test func aReusedCallCarriesOnlyItsOwnMetadataAndDeadline() throws {
        let test = try TestServer()
        let client = try test.connectClient()
        var seen: [(traceID: String?, hasDeadline: Bool)] = []
        var identities: Set<ObjectIdentifier> = []
        test.onHang = { call in
            seen.append((call.traceID, call.deadline != nil))
            identities.insert(ObjectIdentifier(call))
            call.respond([])
        }
        let sent: [(traceID: String?, timeout: UInt32)] = [
            (nil, 0), ("a", 0), ("a", 5_000), (nil, 0), (nil, 5_000), ("b", 0), (nil, 0),
        ]
        for (traceID, timeout) in sent {
            var answer: Result<[UInt8], RPCError>?
            let metadata = traceID.map { [MetadataEntry(key: "trace-id", value: Array($0.utf8))] } ?? []
            client.unary(TestServer.hang, request: [], timeoutMilliseconds: timeout, metadata: metadata) {
                answer = $0
            }
            test.loop.run(until: { answer != nil })
        }
        #expect(identities.count < sent.count, "the test needs call objects to be reused")
        #expect(seen.map(\.traceID) == sent.map(\.traceID))
        #expect(seen.map(\.hasDeadline) == sent.map { $0.timeout > 0 })
        client.close()
        try test.shutDown()
    }

    @Test func unknownMethodIsUnimplemented() throws {
        let test = try TestServer()
        let client = try test.connectClient()
        var outcome: Result<[UInt8], RPCError>?
        client.unary("test.v1.Test/Nope", request: []) { outcome = $0 }
        test.loop.run(until: { outcome != nil })
        let error = try #require(outcome?.failure, "expected a failure")
        #expect(error.code == .unimplemented)
        #expect(error.message.contains("test.v1.Test/Nope"))
        client.close()
        try test.shutDown()
    }

    @Test func aBidirectionalMethodIsForTheGRPCDoorOnly() throws {
        let test = try TestServer()
        let client = try test.connectClient()
        var outcome: Result<[UInt8], RPCError>?
        client.unary(TestServer.chat, request: [1]) { outcome = $0 }
        test.loop.run(until: { outcome != nil })
        let error = try #require(outcome?.failure, "expected a failure")
        #expect(error.code == .unimplemented)
        #expect(error.message == "\(TestServer.chat) takes a stream of requests: call it on the gRPC door")
        client.close()
        try test.shutDown()
    }

    @Test func drainLetsCallsInFlightFinishAndRefusesNewOnes() throws {
        let test = try TestServer()
        let client = try test.connectClient()
        var inFlight: Result<[UInt8], RPCError>?
        client.unary(TestServer.delayed, request: [7]) { inFlight = $0 }
        // Let the call reach the server, then drain.
        test.loop.run(until: { test.server.metrics.methods.isEmpty && test.timers.count == 1 })
        var stopped = false
        test.server.beginGracefulShutdown { stopped = true }
        var refused: Result<[UInt8], RPCError>?
        #expect(client.isOpen)
        test.loop.run(until: { client.goAway != nil })
        // No call can start after the GOAWAY: the client says so, and refuses one before it returns.
        #expect(!client.isOpen)
        client.unary(TestServer.echo, request: [8]) { refused = $0 }
        #expect(refused != nil)
        test.loop.run(until: { inFlight != nil && refused != nil && stopped })
        #expect((try? inFlight?.get()) == [7])
        let error = try #require(refused?.failure, "expected the new call to be refused")
        #expect(error.code == .unavailable)
        #expect(error.isRetryable)
        #expect(client.goAway?.code == .ok)
        #expect(test.server.connectionCount == 0)
        for timer in test.timers { timer.close() }
        try test.loop.close()
    }

    /// A client closing when idle lets its call in flight get its answer, refuses new ones at once
    /// (retryable: never sent), and closes after the last answer.
    @Test func closingWhenIdleLetsTheCallsInFlightFinish() throws {
        let test = try TestServer()
        let client = try test.connectClient()
        var closed = false
        client.onClose = { _ in closed = true }
        var inFlight: Result<[UInt8], RPCError>?
        client.unary(TestServer.delayed, request: [5]) { inFlight = $0 }
        test.loop.run(until: { test.timers.count == 1 })
        client.closeWhenIdle()
        #expect(!client.isOpen)
        var refused: Result<[UInt8], RPCError>?
        client.unary(TestServer.echo, request: [6]) { refused = $0 }
        let error = try #require(refused?.failure, "a call after closeWhenIdle was not refused at once")
        #expect(error.code == .unavailable && error.isRetryable)
        test.loop.run(until: { inFlight != nil && closed })
        #expect((try? inFlight?.get()) == [5])
        test.loop.run(until: { test.server.connectionCount == 0 })
        try test.shutDown()
    }

    /// A closed loop (each completion starts the next call while the connection takes calls), as the
    /// load generator drives the server, through a drain: the calls sent before the GOAWAY reached
    /// the client are refused retryable, and the loop stops. Before `isOpen` said false after a
    /// GOAWAY, each refusal (run before `unary` returned) started the next call, until the stack
    /// ran out: `loadgen unary` crashed whenever the server drained under it.
    @Test func aClosedLoopOfCallsStopsAtADrain() throws {
        let test = try TestServer()
        let client = try test.connectClient()
        var (answered, refused, inFlight) = (0, 0, 0)
        func next() {
            guard client.isOpen else { return }
            inFlight += 1
            client.unary(TestServer.echo, request: [1]) { result in
                inFlight -= 1
                if case .success = result { answered += 1 } else { refused += 1 }
                next()
            }
        }
        for _ in 0..<16 { next() }
        test.loop.run(until: { answered >= 1_000 })
        var stopped = false
        test.server.beginGracefulShutdown { stopped = true }
        test.loop.run(until: { stopped && inFlight == 0 })
        #expect(client.goAway != nil && !client.isOpen)
        #expect(refused <= 16, "only calls already sent when the GOAWAY left are refused")
        for timer in test.timers { timer.close() }
        try test.loop.close()
    }

    /// Many peers arriving at once are admitted (read from) a batch per loop iteration: a
    /// bystander's call, sent as 800 peers have connected and sent their handshakes, is answered
    /// while some of them still wait for admission, and all of them are admitted in the end.
    @Test func peersArrivingTogetherDoNotHoldUpABystander() throws {
        let test = try TestServer()
        let bystander = try test.connectClient()
        guard case .tcp(_, let port) = test.endpoint else { throw UVError.invalidArgument }
        // Fewer than the listener's backlog (1,024): the kernel completes these blocking connects
        // before the server's loop runs, and one past the backlog would wait for a loop that cannot run.
        let arriving = 800
        let sockets = (0..<arriving).map { _ in BlockingSocket(port: port) }
        defer { for socket in sockets { socket.close() } }
        for socket in sockets { socket.send(RawPeer.handshake()) }
        var answer: [UInt8]?
        var waitingAtAnswer = 0
        bystander.unary(TestServer.echo, request: [4]) {
            answer = try? $0.get()
            waitingAtAnswer = test.server.admissions.count
        }
        test.loop.run(until: { answer != nil })
        #expect(answer == [4])
        #expect(waitingAtAnswer > 0, "the answer waited until every arriving peer was admitted")
        test.loop.run(until: { test.server.admissions.count == 0 && test.server.connectionCount == arriving + 1 })
        bystander.close()
        try test.shutDown()
    }

    /// Many peers leaving at once are torn down a batch per loop iteration: a bystander's call,
    /// sent just after 1,200 peers closed, is answered while many of them still wait for their
    /// teardown (before, every teardown ran in the poll that saw the ends of input, and the answer
    /// waited for all of them), and all of them are gone in the end.
    @Test func peersLeavingTogetherDoNotHoldUpABystander() throws {
        let test = try TestServer()
        let bystander = try test.connectClient()
        let leaving = 1_200
        var peers: [RawPeer] = []
        for _ in 0..<leaving {
            let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop)
            peer.send(RawPeer.handshake())
            peers.append(peer)
        }
        test.loop.run(until: { test.server.connectionCount == leaving + 1 })
        for peer in peers { peer.close() }
        var answer: [UInt8]?
        var stillOpenAtAnswer = 0
        bystander.unary(TestServer.echo, request: [9]) {
            answer = try? $0.get()
            stillOpenAtAnswer = test.server.connectionCount - 1
        }
        test.loop.run(until: { answer != nil })
        #expect(answer == [9])
        #expect(
            stillOpenAtAnswer > leaving / 4,
            "the answer waited for \(leaving - stillOpenAtAnswer) of \(leaving) teardowns"
        )
        test.loop.run(until: { test.server.connectionCount == 1 })
        #expect(test.server.teardowns.count == 0)
        bystander.close()
        try test.shutDown()
    }

    @Test func metricsCountCallsByStatusAndLatency() throws {
        let test = try TestServer()
        let client = try test.connectClient()
        var done = 0
        for _ in 0..<10 { client.unary(TestServer.echo, request: [1]) { _ in done += 1 } }
        client.unary("test.v1.Test/Missing", request: []) { _ in done += 1 }
        test.loop.run(until: { done == 11 })
        let echo = try #require(test.server.metrics.methods[TestServer.echo])
        #expect(echo.calls == 10)
        #expect(echo.errors == 0)
        #expect(echo.latency.count == 10)
        #expect(echo.latency.percentile(0.99) >= 1)
        #expect(test.server.metrics.refusedByStatus[StatusCode.unimplemented.rawValue] == 1)
        client.close()
        try test.shutDown()
    }

    /// Calls answered inside `batchingOutput` (a commit acknowledging its mutations) count once
    /// each, timed when the batch ends and their answers leave, not when each was answered.
    @Test func callsAnsweredInAnOutputBatchAreTimedWhenItEnds() throws {
        let test = try TestServer()
        var held: [ServerCall] = []
        test.onHang = { held.append($0) }
        let client = try test.connectClient()
        var answers = 0
        for _ in 0..<3 { client.unary(TestServer.hang, request: []) { if case .success = $0 { answers += 1 } } }
        test.loop.run(until: { held.count == 3 })
        test.server.batchingOutput {
            for call in held { call.respond([7]) }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let hang = try #require(test.server.metrics.methods[TestServer.hang])
        #expect(hang.calls == 3 && hang.latency.count == 3 && hang.errors == 0)
        #expect(hang.latency.percentile(0.01) >= 20_000)
        test.loop.run(until: { answers == 3 })
        client.close()
        try test.shutDown()
    }

    /// Calls that end during one read are recorded together (one clock read): every call still
    /// counts once, under its own method and status, with a latency each.
    @Test func callsEndedInOneReadAreEachCountedUnderTheirMethodAndStatus() throws {
        let test = try TestServer()
        let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop)
        var frames: [UInt8] = RawPeer.handshake()
        let calls: [(stream: UInt32, method: String, endStream: Bool)] = [
            (1, TestServer.echo, true), (3, TestServer.echo, true), (5, TestServer.reverse, true),
            (7, TestServer.echo, false), (9, TestServer.echo, true), (11, TestServer.reverse, true),
        ]
        for call in calls {
            frames += RawPeer.encoded(
                .callStart(StreamID(call.stream), CallStart(method: call.method)),
                .message(StreamID(call.stream), payload: [1, 2], endStream: call.endStream)
            )
        }
        peer.send(frames)
        test.loop.run(until: { calls.allSatisfy { peer.callEnd($0.stream) != nil } || peer.isClosed })
        #expect(peer.callEnd(7)?.code == .invalidArgument)
        let echo = try #require(test.server.metrics.methods[TestServer.echo])
        #expect(echo.calls == 4 && echo.latency.count == 4)
        #expect(echo.callsByStatus == [StatusCode.ok.rawValue: 3, StatusCode.invalidArgument.rawValue: 1])
        let reverse = try #require(test.server.metrics.methods[TestServer.reverse])
        #expect(reverse.calls == 2 && reverse.latency.count == 2 && reverse.errors == 0)
        peer.close()
        try test.shutDown()
    }
}
