import Foundation
import TestSupport
import Testing
import UV

/// Many clients on one loop against an echo server on the same loop.
@Suite(.timeLimit(.minutes(2))) struct ConnectionEchoTests {
    /// Connects `clientCount` clients to `endpoint`, each echoing `messageCount` messages, and checks
    /// every message and every close on both sides. The loop must close cleanly afterwards.
    func runEcho(listenOn endpoint: Endpoint, clientCount: Int, messageCount: Int) throws {
        raiseFileDescriptorLimit()
        let loop = try EventLoop()
        let server = EchoServer()
        let listener = try Listener.listen(on: endpoint, loop: loop, backlog: 4096, delegate: server)
        var finished: [EchoClient] = []
        var connectFailures: [UVError] = []
        func stopWhenDone() {
            if finished.count + connectFailures.count == clientCount && server.closed == server.accepted {
                listener.close()
                loop.stop()
            }
        }
        server.onConnectionClosed = stopWhenDone
        for id in 0..<clientCount {
            let client = EchoClient(id: id, messageCount: messageCount)
            client.onFinished = { client in
                finished.append(client)
                stopWhenDone()
            }
            try Connection.connect(to: listener.endpoint, on: loop) { result in
                switch result {
                case .success(let connection):
                    #expect(throws: Never.self) { try client.start(connection) }
                case .failure(let error):
                    connectFailures.append(error)
                    stopWhenDone()
                }
            }
        }
        loop.runForTest()

        #expect(connectFailures == [])
        #expect(finished.count == clientCount)
        #expect(finished.allSatisfy { $0.verified == messageCount && $0.mismatches == 0 && $0.closeError == nil })
        #expect(server.accepted == clientCount)
        #expect(server.closed == clientCount)
        #expect(server.closeErrors == [])
        try loop.close()
        // The callbacks above capture the objects that hold them; break those cycles.
        server.onConnectionClosed = {}
        for client in finished { client.onFinished = { _ in } }
    }

    @Test func echoesOneThousandConcurrentTCPConnections() throws {
        try runEcho(listenOn: .tcp(host: "127.0.0.1", port: 0), clientCount: 1000, messageCount: 100)
    }

    @Test func echoesOverIPv6Loopback() throws {
        try runEcho(listenOn: .tcp(host: "::1", port: 0), clientCount: 10, messageCount: 100)
    }

    @Test func echoesOverUnixSocket() throws {
        try runEcho(listenOn: .unix(path: temporarySocketPath()), clientCount: 200, messageCount: 100)
    }

    @Test func reportsBoundPortAndPeerAddresses() throws {
        let loop = try EventLoop()
        let server = EchoServer()
        let listener = try Listener.listen(on: .tcp(host: "127.0.0.1", port: 0), loop: loop, delegate: server)
        guard case .tcp(let host, let port) = listener.endpoint else {
            Issue.record("expected a TCP endpoint, got \(listener.endpoint)")
            return
        }
        #expect(host == "127.0.0.1")
        #expect(port > 0)
        var local: Endpoint?
        var remote: Endpoint?
        try Connection.connect(to: listener.endpoint, on: loop) { result in
            guard case .success(let connection) = result else { return }
            local = try? connection.localEndpoint()
            remote = try? connection.remoteEndpoint()
            connection.close()
            listener.close()
            loop.stop()
        }
        loop.runForTest()
        #expect(remote == listener.endpoint)
        if case .tcp(let localHost, let localPort) = local {
            #expect(localHost == "127.0.0.1" && localPort != port)
        } else {
            Issue.record("no local endpoint")
        }
        try loop.close()
    }

    @Test func unixListenerRemovesItsSocketFileWhenClosed() throws {
        let loop = try EventLoop()
        let path = temporarySocketPath()
        let listener = try Listener.listen(on: .unix(path: path), loop: loop, delegate: EchoServer())
        #expect(FileManager.default.fileExists(atPath: path))
        listener.close()
        try loop.close()
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

@Suite struct EndpointParsingTests {
    @Test(arguments: [
        ("127.0.0.1:7420", Endpoint.tcp(host: "127.0.0.1", port: 7420)),
        ("[::1]:80", .tcp(host: "::1", port: 80)),
        ("::1:80", .tcp(host: "::1", port: 80)),
        ("unix:/tmp/x.sock", .unix(path: "/tmp/x.sock")),
    ])
    func parsesAddressesAsCommandLinesWriteThem(text: String, expected: Endpoint) {
        #expect(Endpoint(parsing: text) == expected)
    }

    @Test(arguments: ["127.0.0.1", "host:", ":80", "127.0.0.1:70000", "unix:", "127.0.0.1:x"])
    func rejectsMalformedAddresses(text: String) {
        #expect(Endpoint(parsing: text) == nil)
    }
}
