import Foundation
import RPCClient
import RPCServer
import TestSupport
import Testing
import UV
import Wire

/// Hostile and broken peers against a live server. Each case asserts the exact status or close reason,
/// and that a well-behaved client connected alongside keeps being served during and after.
@Suite(.timeLimit(.minutes(2))) struct MalformedInputTests {
    /// Connects a good client, lets `attack` run a raw peer, and checks the good client before, during
    /// and after; returns the peer for the case's own assertions once `done` holds.
    func withBystander(
        _ test: TestServer,
        attack: (RawPeer) -> Void,
        until done: @escaping (RawPeer) -> Bool
    ) throws -> RawPeer {
        let bystander = try test.connectClient()
        let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop)
        attack(peer)
        var during: [UInt8]?
        bystander.unary(TestServer.echo, request: [1]) { during = try? $0.get() }
        test.loop.run(until: { done(peer) && during != nil })
        var after: [UInt8]?
        bystander.unary(TestServer.echo, request: [2]) { after = try? $0.get() }
        test.loop.run(until: { after != nil })
        #expect(during == [1])
        #expect(after == [2])
        #expect(bystander.isOpen)
        bystander.close()
        peer.close()
        return peer
    }

    @Test func badMagicIsClosedWithoutAnswer() throws {
        let test = try TestServer()
        let peer = try withBystander(
            test,
            attack: { $0.send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)) },
            until: \.isClosed
        )
        #expect(peer.frames == [])
        try test.shutDown()
        #expect(test.server.metrics.connectionsClosedByReason["protocol_error"] == 1)
    }

    @Test func wrongVersionGetsOurPrefaceAndAGoAway() throws {
        let test = try TestServer()
        let peer = try withBystander(test, attack: { $0.send(Preface.magic + [0x00, 0x02]) }, until: \.isClosed)
        #expect(peer.frames.first == .preface(Preface(version: 1)))
        #expect(peer.goAway?.code == .invalidArgument)
        #expect(peer.goAway?.message == "protocol error: unsupported protocol version 2")
        try test.shutDown()
    }

    @Test func frameOverTheLimitIsRefusedBeforeItsPayload() throws {
        let test = try TestServer { $0.maxFrameSize = 16_384 }
        let peer = try withBystander(
            test,
            attack: { peer in
                // Only the header: a 16,385-byte MESSAGE is announced but never sent.
                peer.send(RawPeer.handshake() + [0x00, 0x00, 0x40, 0x01, 0x03, 0x01, 0x00, 0x00, 0x00, 0x01])
            },
            until: \.isClosed
        )
        #expect(peer.goAway?.code == .resourceExhausted)
        #expect(peer.goAway?.message == "protocol error: frame payload of 16385 bytes exceeds the limit of 16384")
        try test.shutDown()
    }

    @Test func unknownFrameTypeClosesTheConnection() throws {
        let test = try TestServer()
        let peer = try withBystander(
            test,
            attack: { $0.send(RawPeer.handshake() + [0, 0, 0, 0, 0x42, 0, 0, 0, 0, 0]) },
            until: \.isClosed
        )
        #expect(peer.goAway?.code == .invalidArgument)
        #expect(peer.goAway?.message == "protocol error: unknown frame type 0x42")
        try test.shutDown()
    }

    @Test func truncatedFrameThenSilenceIsClosedByKeepalive() throws {
        let test = try TestServer {
            $0.connection.keepaliveIntervalMilliseconds = 50
            $0.connection.keepaliveTimeoutMilliseconds = 50
        }
        let peer = try withBystander(
            test,
            attack: { $0.send(RawPeer.handshake() + [0x00, 0x00, 0x00, 0x10, 0x03]) },
            until: \.isClosed
        )
        #expect(peer.frames.contains { if case .ping = $0 { true } else { false } })
        #expect(peer.goAway?.code == .deadlineExceeded)
        #expect(peer.goAway?.message == "keepalive timeout: no PONG")
        try test.shutDown()
    }

    @Test func silentPeerIsClosedByTheHandshakeTimeout() throws {
        let test = try TestServer { $0.connection.handshakeTimeoutMilliseconds = 50 }
        let peer = try withBystander(test, attack: { _ in }, until: \.isClosed)
        #expect(peer.frames == [])
        try test.shutDown()
        #expect(test.server.metrics.connectionsClosedByReason["handshake_timeout"] == 1)
    }

    @Test func messageForAStreamNeverOpenedIsAViolation() throws {
        let test = try TestServer()
        let peer = try withBystander(
            test,
            attack: {
                $0.send(RawPeer.handshake() + RawPeer.encoded(.message(StreamID(99), payload: [1], endStream: true)))
            },
            until: \.isClosed
        )
        #expect(peer.goAway?.code == .invalidArgument)
        #expect(peer.goAway?.message == "protocol violation: MESSAGE for stream 99, which was never opened")
        try test.shutDown()
    }

    @Test func decreasingStreamIDIsAViolation() throws {
        let test = try TestServer()
        let start = CallStart(method: TestServer.hang)
        let peer = try withBystander(
            test,
            attack: {
                $0.send(
                    RawPeer.handshake()
                        + RawPeer.encoded(.callStart(StreamID(5), start), .callStart(StreamID(3), start))
                )
            },
            until: \.isClosed
        )
        #expect(peer.goAway?.message == "protocol violation: stream 3 opened after stream 5: stream ids must increase")
        #expect(peer.goAway?.lastStreamID == StreamID(5))
        try test.shutDown()
    }

    @Test func streamsBeyondTheConcurrencyLimitAreRefused() throws {
        let test = try TestServer { $0.connection.maxConcurrentStreams = 4 }
        var bytes = RawPeer.handshake()
        for stream in stride(from: UInt32(1), through: 9, by: 2) {
            bytes += RawPeer.encoded(
                .callStart(StreamID(stream), CallStart(method: TestServer.hang)),
                .message(StreamID(stream), payload: [], endStream: true)
            )
        }
        let peer = try withBystander(test, attack: { $0.send(bytes) }, until: { $0.callEnd(9) != nil })
        #expect(peer.callEnd(9)?.code == .resourceExhausted)
        #expect(peer.callEnd(9)?.message == "too many concurrent streams (limit 4)")
        #expect(peer.callEnd(1) == nil)
        #expect(!peer.isClosed)
        #expect(test.hangsStarted == 4)
        try test.shutDown()
    }

    @Test func connectionsBeyondTheLimitGetAGoAway() throws {
        let test = try TestServer { $0.maxConnections = 2 }
        let first = try test.connectClient()
        let second = try test.connectClient()
        // Rejected at accept: the server answers before the peer says anything.
        let third = try RawPeer.connect(to: test.endpoint, loop: test.loop)
        test.loop.run(until: { third.isClosed })
        #expect(third.frames.first == .preface(Preface()))
        #expect(third.goAway?.code == .resourceExhausted)
        #expect(third.goAway?.message == "too many connections")
        var answered = 0
        first.unary(TestServer.echo, request: [1]) { if (try? $0.get()) == [1] { answered += 1 } }
        second.unary(TestServer.echo, request: [2]) { if (try? $0.get()) == [2] { answered += 1 } }
        test.loop.run(until: { answered == 2 })
        first.close()
        second.close()
        try test.shutDown()
        #expect(test.server.metrics.connectionsRejected == 1)
    }

    /// A real client sends its preface and SETTINGS as it connects, so they wait unread when the
    /// server rejects it: the rejection must still arrive whole (a close with unread input would
    /// make the kernel reset the connection and could discard the GOAWAY). The client here is a
    /// plain blocking socket that speaks before the server's loop has even accepted it.
    @Test func aRejectedClientThatSpokeFirstStillGetsTheGoAway() throws {
        let test = try TestServer { $0.maxConnections = 1 }
        let first = try test.connectClient()
        guard case .tcp(_, let port) = test.endpoint else { throw UVError.invalidArgument }
        let socket = BlockingSocket(port: port)
        defer { socket.close() }
        socket.send(RawPeer.handshake())
        test.loop.run(until: { test.server.metrics.connectionsRejected == 1 })
        var decoder = FrameDecoder(maxFrameSize: WireLimits.defaultMaxFrameSize, expectsPreface: true)
        let (bytes, error) = socket.receiveUntilClosed()
        #expect(error == 0, "the connection was reset (errno \(error)) after \(bytes.count) bytes")
        decoder.append(contentsOf: bytes)
        var frames: [Frame] = []
        while let frame = try decoder.nextFrame() { frames.append(frame) }
        #expect(frames.first == .preface(Preface()))
        #expect(
            frames.last
                == .goAway(GoAway(lastStreamID: .connection, code: .resourceExhausted, message: "too many connections"))
        )
        first.close()
        try test.shutDown()
    }

    /// What a peer that never reads costs is measured by what the server holds for it and what it
    /// produced, not by the process's resident size: the other suites run in the same process at the
    /// same time, and their allocations would count against this one.
    @Test func clientThatNeverReadsCostsBoundedMemory() throws {
        let test = try TestServer()
        let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop)
        let bulkMessages: UInt32 = 16_384  // 16,384 × 64 KiB = 1 GiB
        let messageSize = 64 << 10
        // Unlimited credit, so only the outbound buffer can hold the server back.
        peer.send(
            RawPeer.handshake(Settings([Setting(.initialStreamCredit, UInt32.max)]))
                + RawPeer.encoded(
                    .callStart(StreamID(1), CallStart(method: TestServer.bulk)),
                    .message(StreamID(1), payload: bigEndianBytes(bulkMessages), endStream: true)
                )
        )
        peer.stopReading()
        // Run until the stream has stalled: nothing more sent for a while.
        var lastSent = -1
        var mostHeld = 0
        test.loop.run(until: {
            defer { lastSent = test.bulkSent }
            mostHeld = max(mostHeld, test.server.bufferedByteCount)
            return test.bulkSent > 0 && test.bulkSent == lastSent
        })
        let settle = LoopTimer(loop: test.loop)
        settle.start(after: .milliseconds(200)) { test.loop.stop() }
        test.loop.runForTest()
        settle.close()
        mostHeld = max(mostHeld, test.server.bufferedByteCount)
        let produced = test.bulkSent * messageSize
        print(
            "bounded-memory: sent \(test.bulkSent) of \(bulkMessages) 64 KiB messages; held at most \(mostHeld >> 10) KiB"
        )
        #expect(test.bulkSent < Int(bulkMessages))
        // The server stops producing at the high watermark, so it holds at most that plus the
        // message that crossed it and its frame header.
        let watermark = test.server.configuration.outboundHighWatermark
        #expect(mostHeld <= watermark + messageSize + 64, "held \(mostHeld) bytes for a peer that does not read")
        // The rest of what it produced sits in the kernel's socket buffers, which are bounded too.
        #expect(produced < 64 << 20, "produced \(produced >> 20) MiB for a peer that does not read")
        // Everyone else is still served.
        let bystander = try test.connectClient()
        var answer: [UInt8]?
        bystander.unary(TestServer.echo, request: [3]) { answer = try? $0.get() }
        test.loop.run(until: { answer != nil })
        #expect(answer == [3])
        bystander.close()
        peer.close()
        // The output it never read is dropped with it, and no longer counted.
        test.loop.run(until: { test.server.connectionCount == 0 })
        #expect(test.server.bufferedByteCount == 0)
        try test.shutDown()
    }

    /// A client that asks for more large answers than it reads: the answer that would pass the
    /// ceiling of unsent output (8 MiB + the client's 16 MiB frames) fails its call; the connection,
    /// and the answer that fit, go on.
    @Test func largeAnswersPastTheUnsentCeilingFailTheirCallsNotTheConnection() throws {
        let test = try TestServer()
        let frameSize = WireLimits.maximumMaxFrameSize
        let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop, maxFrameSize: frameSize)
        peer.stopReading()
        let size = 12 << 20
        let streams: [UInt32] = [1, 3, 5, 7]
        var bytes = RawPeer.handshake(Settings([Setting(.maxFrameSize, UInt32(frameSize))]))
        for stream in streams {
            bytes += RawPeer.encoded(
                .callStart(StreamID(stream), CallStart(method: TestServer.large)),
                .message(StreamID(stream), payload: bigEndianBytes(UInt32(size)), endStream: true)
            )
        }
        peer.send(bytes)
        // The four requests arrive in one read: the first answer is still unsent when the others come.
        let settle = LoopTimer(loop: test.loop)
        settle.start(after: .milliseconds(300)) { test.loop.stop() }
        test.loop.runForTest()
        settle.close()
        peer.resumeReading()
        test.loop.run(until: { streams.allSatisfy { peer.callEnd($0) != nil } || peer.isClosed })
        #expect(peer.goAway == nil && !peer.isClosed)
        #expect(peer.callEnd(1)?.code == .ok)
        for stream in streams.dropFirst() {
            #expect(peer.callEnd(stream)?.code == .resourceExhausted)
            #expect(peer.callEnd(stream)?.message.hasSuffix("read the answers before asking for more") == true)
        }
        let answers = peer.frames.compactMap { frame -> Int? in
            guard case .message(_, let payload, _) = frame else { return nil }
            return payload.count
        }
        #expect(answers == [size])
        peer.close()
        try test.shutDown()
    }

    /// Peers that each hold part of a frame: once all connections together hold more than the
    /// server's buffer budget, the one holding the most is closed, the others go on, and the count
    /// falls back to what the rest hold (to zero once they close).
    @Test func theServersBufferBudgetClosesTheConnectionsHoldingTheMost() throws {
        let test = try TestServer { $0.maxBufferedBytes = 2 << 20 }
        // Each peer sends the start of a frame announcing about 1 MiB: the server buffers what came.
        // The first two (900 + 1,000 KiB) fit the budget of 2,048 KiB; the third's 500 pass it.
        let sizes = [900 << 10, 1000 << 10, 500 << 10]
        let header = Array(
            RawPeer.encoded(.message(StreamID(1), payload: [UInt8](repeating: 0, count: 1 << 20), endStream: true))
                .prefix(FrameHeader.length)
        )
        var peers: [RawPeer] = []
        for size in sizes {
            let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop)
            peer.send(RawPeer.handshake() + header + [UInt8](repeating: 7, count: size))
            peers.append(peer)
            // One peer at a time, so that the one holding the most when the budget passes is known.
            let sent = peers.count < 3 ? peers.indices.reduce(0) { $0 + header.count + sizes[$1] } : 0
            if sent > 0 { test.loop.run(until: { test.server.bufferedByteCount == sent }) }
        }
        let rest = 2 * header.count + sizes[0] + sizes[2]
        test.loop.run(until: { peers[1].isClosed && test.server.bufferedByteCount == rest })
        #expect(!peers[0].isClosed && !peers[2].isClosed)
        #expect(test.server.metrics.connectionsClosedByReason["buffer_budget_exceeded"] == 1)
        let bystander = try test.connectClient()
        var answer: [UInt8]?
        bystander.unary(TestServer.echo, request: [5]) { answer = try? $0.get() }
        test.loop.run(until: { answer != nil })
        #expect(answer == [5])
        for peer in peers { peer.close() }
        test.loop.run(until: { test.server.connectionCount == 1 })
        #expect(test.server.bufferedByteCount == 0)
        bystander.close()
        try test.shutDown()
    }

    /// Open calls' metadata counts in the budget: answered calls stop counting when they end, and a
    /// peer holding calls open with large metadata is the one closed once it passes the budget.
    @Test func openCallsMetadataCountsInTheServersBufferBudget() throws {
        let test = try TestServer { $0.maxBufferedBytes = 64 << 10 }
        let metadata = [MetadataEntry(key: "x-padding", value: [UInt8](repeating: 1, count: 4_000))]
        let client = try test.connectClient()
        var answered = 0
        for index in 0..<10 {
            _ = client.unary(TestServer.echo, request: [UInt8(index)], metadata: metadata) {
                if (try? $0.get()) == [UInt8(index)] { answered += 1 }
            }
        }
        test.loop.run(until: { answered == 10 })
        #expect(test.server.bufferedByteCount == 0)
        // Twenty calls that wait for their requests: about 80 KB of metadata.
        let peer = try RawPeer.connect(to: test.endpoint, loop: test.loop)
        var bytes = RawPeer.handshake()
        for stream in stride(from: UInt32(1), through: 39, by: 2) {
            bytes += RawPeer.encoded(
                .callStart(StreamID(stream), CallStart(method: TestServer.hang, metadata: metadata))
            )
        }
        peer.send(bytes)
        test.loop.run(until: { peer.isClosed })
        #expect(test.server.metrics.connectionsClosedByReason["buffer_budget_exceeded"] == 1)
        test.loop.run(until: { test.server.connectionCount == 1 })
        #expect(test.server.bufferedByteCount == 0)
        var answer: [UInt8]?
        _ = client.unary(TestServer.echo, request: [42]) { answer = try? $0.get() }
        test.loop.run(until: { answer != nil })
        #expect(answer == [42])
        client.close()
        try test.shutDown()
    }

    /// A large answer that would pass the server's buffer budget fails its call; one that fits goes.
    @Test func aLargeAnswerPastTheServersBufferBudgetFailsItsCall() throws {
        let test = try TestServer { $0.maxBufferedBytes = 8 << 20 }
        let client = try test.connectClient()
        var results: [Int: Result<[UInt8], RPCError>] = [:]
        for size in [4 << 20, 12 << 20] {
            client.unary(TestServer.large, request: bigEndianBytes(UInt32(size))) { results[size] = $0 }
        }
        test.loop.run(until: { results.count == 2 })
        #expect((try? results[4 << 20]?.get())?.count == 4 << 20)
        guard case .failure(let error) = results[12 << 20] else {
            Issue.record("the 12 MiB answer passed an 8 MiB budget")
            return
        }
        #expect(error.code == .resourceExhausted)
        #expect(error.message.hasPrefix("response of 12582912 bytes does not fit the server's buffers ("))
        #expect(error.message.hasSuffix(" of 8388608 bytes held for its connections): try again later"))
        client.close()
        try test.shutDown()
    }
}

@Suite(.timeLimit(.minutes(1))) struct AuthenticationTests {
    final class User: Principal {
        let displayName: String
        init(_ name: String) { displayName = name }
    }

    final class TokenTable: Authenticator {
        let users = ["good-token": User("alice")]
        func principal(forToken token: String) -> (any Principal)? { users[token] }
    }

    @Test func callsBeforeAuthenticationAreUnauthenticated() throws {
        let authenticator = TokenTable()
        let test = try TestServer(authenticator: authenticator)
        let client = try test.connectClient()
        var results: [String: Result<[UInt8], RPCError>] = [:]
        client.unary(TestServer.echo, request: [1]) { results["none"] = $0 }
        client.unary(
            TestServer.echo,
            request: [2],
            metadata: [MetadataEntry(key: "authorization", value: "Bearer bad")]
        ) {
            results["bad"] = $0
        }
        test.loop.run(until: { results.count == 2 })
        #expect(results["none"]?.failure?.code == .unauthenticated)
        #expect(results["bad"]?.failure?.code == .unauthenticated)
        // A caller can tell a missing token from one that is refused (and learns nothing more).
        #expect(results["none"]?.failure?.message == "authenticate first: send authorization: Bearer <token>")
        #expect(results["bad"]?.failure?.message == "the bearer token was not accepted: it is unknown or was revoked")
        client.unary(
            TestServer.echo,
            request: [3],
            metadata: [MetadataEntry(key: "authorization", value: "Bearer good-token")]
        ) {
            results["good"] = $0
        }
        test.loop.run(until: { results.count == 3 })
        #expect((try? results["good"]?.get()) == [3])
        // The connection stays authenticated.
        client.unary(TestServer.echo, request: [4]) { results["after"] = $0 }
        test.loop.run(until: { results.count == 4 })
        #expect((try? results["after"]?.get()) == [4])
        client.close()
        try test.shutDown()
    }
}

/// A blocking TCP client on the POSIX API: it can connect and send before any event loop runs,
/// which a libuv connection (the UV layer, where the product's socket code lives) cannot.
struct BlockingSocket {
    let descriptor: Int32

    init(port: Int) {
        descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        precondition(connected == 0, "connect failed: errno \(errno)")
    }

    func send(_ bytes: [UInt8]) {
        let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }
        precondition(sent == bytes.count, "send failed: errno \(errno)")
    }

    /// Everything until the peer's end of input, and the errno that ended it early (0 for none).
    func receiveUntilClosed() -> (bytes: [UInt8], error: Int32) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return (received, 0) }
            if count < 0 { return (received, errno) }
            received += buffer[0..<count]
        }
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}
