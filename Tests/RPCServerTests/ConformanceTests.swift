import Foundation
import RPCServer
import TestSupport
import Testing
import UV
import Wire

/// The six disagreements an independent client (written from docs/PROTOCOL.md) found, each against a
/// live server with a raw peer.
@Suite(.timeLimit(.minutes(2))) struct ConformanceTests {
    /// The payload size of the frame the server sent for `streamID`'s CALL_END.
    func callEndPayloadSize(_ status: CallStatus, streamID: UInt32) -> Int {
        var bytes: [UInt8] = []
        FrameEncoder.encode(.callEnd(StreamID(streamID), status), into: &bytes)
        return bytes.count - FrameHeader.length
    }

    @Test func aCallEndFitsThePeersFrameLimitAndDoesNotEchoUnboundedInput() throws {
        let test = try TestServer()
        let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop)
        let name = String(repeating: "x", count: 20_000)
        peer.send(
            RawPeer.handshake(Settings([Setting(.maxFrameSize, 16_384)]))
                + RawPeer.encoded(.callStart(StreamID(1), CallStart(method: name)))
        )
        test.loop.run(until: { peer.callEnd(1) != nil || peer.isClosed })
        let status = try #require(peer.callEnd(1))
        #expect(status.code == .unimplemented)
        #expect(status.message.utf8.count <= CallStatus.maxServerMessageBytes)
        #expect(callEndPayloadSize(status, streamID: 1) <= 16_384)
        #expect(peer.goAway == nil)
        peer.close()
        try test.shutDown()
    }

    @Test func fittingAStatusCutsAtACharacterAndDropsDetailsThatCannotFit() {
        let status = CallStatus(code: .notFound, message: String(repeating: "é", count: 900), details: [1, 2, 3])
        let fitted = status.fitted(toFrameSize: 16_384)
        #expect(fitted.message.utf8.count <= 1024 && fitted.message.allSatisfy { $0 == "é" })
        #expect(fitted.details == [1, 2, 3])
        let huge = CallStatus(code: .internal, message: "m", details: [UInt8](repeating: 7, count: 20_000))
        #expect(huge.fitted(toFrameSize: 16_384).details.isEmpty)
        #expect(
            CallStatus(code: .ok, message: "fine").fitted(toFrameSize: 16_384) == CallStatus(code: .ok, message: "fine")
        )
    }

    @Test func theDeadlineRunsFromCallStartEvenWithoutARequest() throws {
        let test = try TestServer()
        let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop)
        peer.send(
            RawPeer.handshake()
                + RawPeer.encoded(.callStart(StreamID(1), CallStart(method: TestServer.echo, timeoutMilliseconds: 100)))
        )
        test.loop.run(until: { peer.callEnd(1) != nil || peer.isClosed })
        #expect(peer.callEnd(1)?.code == .deadlineExceeded)
        #expect(peer.callEnd(1)?.message == "deadline exceeded before the request arrived")
        peer.close()
        try test.shutDown()
    }

    @Test func aCallWithoutDeadlineCannotWaitForeverForItsRequest() throws {
        let test = try TestServer { $0.requestTimeoutMilliseconds = 100 }
        let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop)
        peer.send(RawPeer.handshake() + RawPeer.encoded(.callStart(StreamID(1), CallStart(method: TestServer.echo))))
        test.loop.run(until: { peer.callEnd(1) != nil || peer.isClosed })
        #expect(peer.callEnd(1)?.code == .deadlineExceeded)
        #expect(peer.callEnd(1)?.message == "the request message did not arrive within 100 ms")
        // A request that does arrive in time is served as usual.
        peer.send(
            RawPeer.encoded(
                .callStart(StreamID(3), CallStart(method: TestServer.echo)),
                .message(StreamID(3), payload: [42], endStream: true)
            )
        )
        test.loop.run(until: { peer.callEnd(3) != nil || peer.isClosed })
        #expect(peer.callEnd(3)?.code == .ok)
        peer.close()
        try test.shutDown()
    }

    @Test func framesForASkippedStreamIDAreIgnoredLikeThoseOfAnEndedCall() throws {
        let test = try TestServer()
        let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop)
        peer.send(
            RawPeer.handshake()
                + RawPeer.encoded(
                    .callStart(StreamID(5), CallStart(method: TestServer.echo)),
                    // Stream 3 was skipped: opening 5 closed it.
                    .credit(StreamID(3), increment: 1),
                    .message(StreamID(5), payload: [7], endStream: true)
                )
        )
        test.loop.run(until: { peer.callEnd(5) != nil || peer.isClosed })
        #expect(peer.callEnd(5)?.code == .ok)
        #expect(peer.goAway == nil)
        // Above every opened id it is still a violation.
        peer.send(RawPeer.encoded(.credit(StreamID(9), increment: 1)))
        test.loop.run(until: { peer.isClosed })
        #expect(peer.goAway?.message == "protocol violation: CREDIT for stream 9, which was never opened")
        try test.shutDown()
    }

    @Test func aSecondPrefaceIsNamedAsSuch() throws {
        let test = try TestServer()
        let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop)
        var again: [UInt8] = []
        FrameEncoder.encode(.preface(Preface()), into: &again)
        peer.send(RawPeer.handshake() + again + [0, 0])
        test.loop.run(until: { peer.isClosed })
        #expect(peer.goAway?.code == .invalidArgument)
        #expect(peer.goAway?.message == "protocol error: \(WireError.secondPreface)")
        try test.shutDown()
    }

    /// A call carrying more metadata than the limit is refused with RESOURCE_EXHAUSTED (the peer
    /// could otherwise make each of its open calls hold 65,535 entries), and the connection goes on.
    @Test func aCallWithTooMuchMetadataIsRefusedAndTheConnectionServes() throws {
        let test = try TestServer()
        let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop)
        let entries = [MetadataEntry](repeating: MetadataEntry(key: "k", value: [1]), count: 600)
        peer.send(
            RawPeer.handshake()
                + RawPeer.encoded(
                    .callStart(StreamID(1), CallStart(method: TestServer.echo, metadata: entries)),
                    .message(StreamID(1), payload: [1], endStream: true),
                    .callStart(StreamID(3), CallStart(method: TestServer.echo, metadata: Array(entries.prefix(400)))),
                    .message(StreamID(3), payload: [3], endStream: true)
                )
        )
        test.loop.run(until: { (peer.callEnd(1) != nil && peer.callEnd(3) != nil) || peer.isClosed })
        #expect(peer.callEnd(1)?.code == .resourceExhausted)
        #expect(peer.callEnd(1)?.message.hasPrefix("metadata larger than 16384 bytes") == true)
        #expect(peer.callEnd(1)?.isRetryable == false)
        #expect(peer.callEnd(3)?.code == .ok)
        #expect(peer.goAway == nil)
        peer.close()
        try test.shutDown()
    }

    @Test func anyReceivedByteIsLiveness() {
        var machine = ConnectionStateMachine<Void>(
            configuration: .init(keepaliveIntervalMilliseconds: 100, keepaliveTimeoutMilliseconds: 50),
            now: 0
        )
        _ = machine.frameReceived(.preface(Preface()), now: 0)
        _ = machine.frameReceived(.settings(Settings()), now: 0)
        #expect(machine.timerFired(now: 100) == .send(.ping(1)))
        // Part of a large frame arrives, but no PONG and no whole frame.
        machine.bytesReceived(now: 120)
        #expect(machine.timerFired(now: 160) == .none)
        machine.bytesReceived(now: 200)
        #expect(machine.timerFired(now: 290) == .none)
        #expect(machine.timerFired(now: 300) == .send(.ping(2)))
        if case .close(let reason, _) = machine.timerFired(now: 350) {
            #expect(reason == .keepaliveTimeout)
        } else {
            Issue.record("silence after the second PING must close the connection")
        }
    }
}
