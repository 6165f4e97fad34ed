import RPCServer
import Testing
import Wire

/// The connection protocol without sockets: frames and times go in, actions come out.
@Suite struct ConnectionStateMachineTests {
    /// Each open call's value is its stream id.
    typealias Machine = ConnectionStateMachine<UInt32>

    static let configuration = Machine.Configuration(
        maxConcurrentStreams: 2,
        keepaliveIntervalMilliseconds: 1_000,
        keepaliveTimeoutMilliseconds: 500,
        idleTimeoutMilliseconds: 10_000,
        handshakeTimeoutMilliseconds: 2_000,
        drainGracePeriodMilliseconds: 3_000
    )

    /// A machine that has completed the handshake at time 0.
    func handshaken() -> Machine {
        var machine = Machine(configuration: Self.configuration, now: 0)
        #expect(machine.frameReceived(.preface(Preface()), now: 0) == .sendHandshake)
        #expect(machine.frameReceived(.settings(Settings([Setting(.initialStreamCredit, 7)])), now: 0) == .none)
        return machine
    }

    /// Sends a CALL_START on `streamID` and, when the machine admits it, opens the call as the
    /// connection would.
    @discardableResult
    func start(_ machine: inout Machine, _ streamID: UInt32, now: UInt64) -> Machine.Action {
        let action = machine.frameReceived(.callStart(StreamID(streamID), CallStart(method: "m")), now: now)
        if case .startCall = action { machine.callOpened(streamID, on: StreamID(streamID)) }
        return action
    }

    func goAway(_ action: Machine.Action) -> GoAway? {
        if case .close(_, let farewell) = action, case .goAway(let goAway)? = farewell.last { return goAway }
        if case .send(.goAway(let goAway)) = action { return goAway }
        return nil
    }

    @Test func handshakeAppliesPeerSettings() {
        let machine = handshaken()
        #expect(machine.peerSettings.initialStreamCredit == 7)
        #expect(machine.peerSettings.maxFrameSize == WireLimits.defaultMaxFrameSize)
    }

    @Test func firstFrameAfterPrefaceMustBeSettings() {
        var machine = Machine(configuration: Self.configuration, now: 0)
        _ = machine.frameReceived(.preface(Preface()), now: 0)
        let action = machine.frameReceived(.ping(1), now: 0)
        #expect(
            action
                == .close(
                    .protocolViolation("expected SETTINGS first"),
                    farewell: [goAwayFrame(0, .invalidArgument, "protocol violation: expected SETTINGS first")]
                )
        )
        #expect(machine.isClosed)
    }

    @Test func handshakeTimeoutClosesSilently() {
        var machine = Machine(configuration: Self.configuration, now: 100)
        #expect(machine.timerFired(now: 2_099) == .none)
        #expect(machine.timerFired(now: 2_100) == .close(.handshakeTimeout, farewell: []))
    }

    @Test func callsStartAndEndAndIdsMustIncrease() {
        var machine = handshaken()
        #expect(start(&machine, 1, now: 1) == .startCall(StreamID(1), CallStart(method: "m")))
        #expect(machine.openStreamCount == 1 && machine.isOpen(StreamID(1)) && machine.call(on: StreamID(1)) == 1)
        #expect(
            machine.frameReceived(.message(StreamID(1), payload: [9], endStream: true), now: 1)
                == .deliverMessage(StreamID(1), payload: [9], endStream: true)
        )
        #expect(machine.streamFrameReceived(on: StreamID(1), kind: .message, now: 1) == .open(1))
        #expect(machine.endCall(StreamID(1), now: 2) == (1, .none))
        // Ending it again finds nothing: a late answer is dropped.
        #expect(machine.endCall(StreamID(1), now: 2) == (nil, .none))
        // A late frame for an ended stream is dropped, not an error.
        #expect(machine.frameReceived(.cancel(StreamID(1)), now: 3) == .none)
        let reused = machine.frameReceived(.callStart(StreamID(1), CallStart(method: "m")), now: 4)
        #expect(
            goAway(reused)?.message == "protocol violation: stream 1 opened after stream 1: stream ids must increase"
        )
    }

    @Test func concurrencyLimitRefusesWithRetryableResourceExhausted() {
        var machine = handshaken()
        start(&machine, 1, now: 0)
        start(&machine, 3, now: 0)
        let third = start(&machine, 5, now: 0)
        #expect(
            third
                == .refuseCall(
                    StreamID(5),
                    CallStatus(
                        code: .resourceExhausted,
                        message: "too many concurrent streams (limit 2)",
                        isRetryable: true
                    )
                )
        )
        _ = machine.endCall(StreamID(1), now: 1)
        #expect(start(&machine, 7, now: 1) == .startCall(StreamID(7), CallStart(method: "m")))
    }

    @Test func framesForStreamsNeverOpenedAreViolations() {
        var machine = handshaken()
        #expect(
            goAway(machine.frameReceived(.credit(StreamID(3), increment: 1), now: 0))?.message
                == "protocol violation: CREDIT for stream 3, which was never opened"
        )
    }

    @Test func cancelAndCreditAreRouted() {
        var machine = handshaken()
        start(&machine, 1, now: 0)
        #expect(machine.frameReceived(.credit(StreamID(1), increment: 5), now: 0) == .addCredit(StreamID(1), 5))
        #expect(machine.frameReceived(.cancel(StreamID(1)), now: 0) == .cancelCall(StreamID(1)))
        // The call is open until the connection has stopped it and ends it.
        #expect(machine.openStreamCount == 1)
        #expect(machine.endCall(StreamID(1), now: 0) == (1, .none))
        #expect(machine.openStreamCount == 0)
    }

    @Test func pingIsAnsweredWithPong() {
        var machine = handshaken()
        #expect(machine.frameReceived(.ping(0xABCD), now: 0) == .send(.pong(0xABCD)))
    }

    @Test func clientCallEndIsAViolation() {
        var machine = handshaken()
        #expect(goAway(machine.frameReceived(.callEnd(StreamID(1), .ok), now: 0))?.code == .invalidArgument)
    }

    @Test func keepalivePingsAfterSilenceAndClosesWithoutPong() {
        var machine = handshaken()
        #expect(machine.timerFired(now: 999) == .none)
        #expect(machine.timerFired(now: 1_000) == .send(.ping(1)))
        // No second ping while one is outstanding.
        #expect(machine.timerFired(now: 1_200) == .none)
        let closed = machine.timerFired(now: 1_500)
        #expect(
            closed
                == .close(
                    .keepaliveTimeout,
                    farewell: [goAwayFrame(0, .deadlineExceeded, "keepalive timeout: no PONG")]
                )
        )
    }

    @Test func pongKeepsTheConnectionAlive() {
        var machine = handshaken()
        start(&machine, 1, now: 0)
        #expect(machine.timerFired(now: 1_000) == .send(.ping(1)))
        #expect(machine.frameReceived(.pong(1), now: 1_100) == .none)
        #expect(machine.timerFired(now: 1_600) == .none)
        #expect(machine.timerFired(now: 2_100) == .send(.ping(2)))
    }

    @Test func idleTimeoutClosesOnlyWithoutCallsInFlight() {
        var machine = handshaken()
        start(&machine, 1, now: 0)
        // Keep answering pings so keepalive stays quiet.
        var ping: UInt64 = 0
        for now in stride(from: UInt64(1_000), through: 12_000, by: 1_000) {
            if case .send(.ping(let payload)) = machine.timerFired(now: now) { ping = payload }
            _ = machine.frameReceived(.pong(ping), now: now)
        }
        #expect(!machine.isClosed)
        _ = machine.endCall(StreamID(1), now: 12_000)
        #expect(
            machine.timerFired(now: 21_999) != .close(.idleTimeout, farewell: [goAwayFrame(1, .ok, "idle timeout")])
        )
        #expect(
            machine.timerFired(now: 22_000) == .close(.idleTimeout, farewell: [goAwayFrame(1, .ok, "idle timeout")])
        )
    }

    @Test func drainWaitsForCallsThenCloses() {
        var machine = handshaken()
        start(&machine, 1, now: 0)
        #expect(machine.drainRequested(now: 10) == .send(goAwayFrame(1, .ok, "server is draining")))
        let refused = start(&machine, 3, now: 11)
        #expect(
            refused
                == .refuseCall(
                    StreamID(3),
                    CallStatus(code: .unavailable, message: "server is draining", isRetryable: true)
                )
        )
        #expect(machine.endCall(StreamID(1), now: 12) == (1, .close(.drained, farewell: [])))
    }

    @Test func drainGracePeriodEnds() {
        var machine = handshaken()
        start(&machine, 1, now: 0)
        _ = machine.drainRequested(now: 0)
        #expect(machine.timerFired(now: 2_999) != .close(.drained, farewell: []))
        #expect(machine.timerFired(now: 3_000) == .close(.drained, farewell: []))
    }

    @Test func peerGoAwayClosesOnceItsCallsEnd() {
        var machine = handshaken()
        start(&machine, 1, now: 0)
        #expect(machine.frameReceived(.goAway(GoAway(lastStreamID: .connection, code: .ok)), now: 1) == .none)
        #expect(machine.endCall(StreamID(1), now: 2) == (1, .close(.peerClosed, farewell: [])))
    }

    /// With no call open the peer's GOAWAY closes at once, and as above without a GOAWAY back.
    @Test func peerGoAwayWithNoCallOpenClosesAtOnce() {
        var machine = handshaken()
        #expect(
            machine.frameReceived(.goAway(GoAway(lastStreamID: .connection, code: .ok)), now: 1)
                == .close(.peerClosed, farewell: [])
        )
    }

    @Test(arguments: [WireError.unsupportedVersion(9), .badMagic, .unknownFrameType(0x33)])
    func decodingFailuresCloseWithTheRightFarewell(error: WireError) {
        var machine = Machine(configuration: Self.configuration, now: 0)
        if error == .unknownFrameType(0x33) {
            _ = machine.frameReceived(.preface(Preface()), now: 0)
        }
        guard case .close(.protocolError(error), let farewell) = machine.decodingFailed(error) else {
            Issue.record("expected a close for \(error)")
            return
        }
        switch error {
        case .badMagic: #expect(farewell == [])
        case .unsupportedVersion: #expect(farewell.first == .preface(Preface()) && farewell.count == 2)
        default: #expect(farewell == [goAwayFrame(0, .invalidArgument, "protocol error: \(error)")])
        }
    }

    func goAwayFrame(_ lastStream: UInt32, _ code: StatusCode, _ message: String) -> Frame {
        .goAway(GoAway(lastStreamID: StreamID(lastStream), code: code, message: message))
    }
}
