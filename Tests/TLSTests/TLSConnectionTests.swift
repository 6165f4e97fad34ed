import TLS
import TestSupport
import Testing
import UV

/// TLS sessions between two connections on one loop: handshakes, what they agree on, every way a
/// handshake is refused (with the reason each side reports), and data both ways.
@Suite(.timeLimit(.minutes(1))) struct TLSConnectionTests {
    static let server = TLSServerConfiguration(
        certificateChainPath: TestCertificates.certificate("server"),
        privateKeyPath: TestCertificates.key("server"),
        applicationProtocols: [ApplicationProtocol.homeRPC]
    )
    static let client = TLSClientConfiguration(
        trustedCAPath: TestCertificates.certificate("ca"),
        applicationProtocols: [ApplicationProtocol.homeRPC]
    )

    @Test func handshakeAgreesOnTLS13AndTheProtocolThenCarriesDataBothWays() throws {
        let outcome = try Exchange.run(server: Self.server, client: Self.client, payload: Array("hello".utf8))
        #expect(outcome.echoed == Array("hello".utf8))
        #expect(outcome.serverFailure == nil && outcome.clientFailure == nil)
        #expect(outcome.serverProtocol == ApplicationProtocol.homeRPC)
        #expect(outcome.serverVersion == "TLSv1.3")
        #expect(outcome.serverHandshakes == 1)
        #expect(outcome.clientSubject == nil)
    }

    @Test func carriesAMegabyteInManyRecords() throws {
        let payload = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let outcome = try Exchange.run(server: Self.server, client: Self.client, payload: payload)
        #expect(outcome.echoed == payload)
    }

    @Test func clientWithoutALPNIsServed() throws {
        var client = Self.client
        client.applicationProtocols = []
        let outcome = try Exchange.run(server: Self.server, client: client, payload: [1, 2, 3])
        #expect(outcome.echoed == [1, 2, 3])
        #expect(outcome.serverProtocol == nil)
    }

    @Test func wrongALPNIsRefusedNamingWhatTheClientOffered() throws {
        var client = Self.client
        client.applicationProtocols = ["h2", "http/1.1"]
        let outcome = try Exchange.run(server: Self.server, client: client, payload: [1])
        #expect(outcome.echoed == [])
        #expect(outcome.serverFailure?.contains("the client offered ALPN h2, http/1.1") == true)
        #expect(outcome.clientFailure?.contains("no application protocol") == true)
    }

    @Test(arguments: ["self-signed", "other-server", "expired"])
    func untrustedServerCertificateIsRefusedByTheClient(certificate: String) throws {
        var server = Self.server
        server.certificateChainPath = TestCertificates.certificate(certificate)
        server.privateKeyPath = TestCertificates.key(certificate)
        let outcome = try Exchange.run(server: server, client: Self.client, payload: [1])
        #expect(outcome.echoed == [])
        let expected = certificate == "expired" ? "certificate has expired" : "certificate verify failed"
        #expect(outcome.clientFailure?.contains(expected) == true, "\(outcome.clientFailure ?? "no failure")")
        #expect(outcome.serverFailure != nil)
    }

    @Test func certificateForAnotherNameIsRefused() throws {
        let outcome = try Exchange.run(
            server: Self.server,
            client: Self.client,
            serverName: "homed.example.com",
            payload: [1]
        )
        #expect(outcome.clientFailure?.contains("certificate verify failed") == true)
    }

    @Test func mutualTLSGivesTheServerTheClientsSubject() throws {
        var server = Self.server
        server.clientCAPath = TestCertificates.certificate("ca")
        var client = Self.client
        client.certificateChainPath = TestCertificates.certificate("client")
        client.privateKeyPath = TestCertificates.key("client")
        let outcome = try Exchange.run(server: server, client: client, payload: [7])
        #expect(outcome.echoed == [7])
        #expect(outcome.clientSubject == "CN=reader,O=HomeRPC Tests")
    }

    @Test(arguments: [nil, "other-client"])
    func mutualTLSRefusesAMissingOrForeignClientCertificate(certificate: String?) throws {
        var server = Self.server
        server.clientCAPath = TestCertificates.certificate("ca")
        var client = Self.client
        client.certificateChainPath = certificate.map(TestCertificates.certificate)
        client.privateKeyPath = certificate.map(TestCertificates.key)
        let outcome = try Exchange.run(server: server, client: client, payload: [7])
        #expect(outcome.echoed == [])
        let expected = certificate == nil ? "peer did not return a certificate" : "certificate verify failed"
        #expect(outcome.serverFailure?.contains(expected) == true, "\(outcome.serverFailure ?? "no failure")")
    }

    @Test func plaintextClientOnATLSListenerIsRefused() throws {
        let outcome = try Exchange.run(server: Self.server, client: nil, payload: Array("HRPC\r\n\0\u{1}".utf8))
        #expect(outcome.echoed == [])
        #expect(outcome.serverFailure?.contains("wrong version number") == true, "\(outcome.serverFailure ?? "")")
    }

    @Test func contextRefusesAKeyThatDoesNotMatchItsCertificate() {
        var server = Self.server
        server.privateKeyPath = TestCertificates.key("client")
        #expect(throws: TLSError.self) { try TLSContext(server: server) }
        server.privateKeyPath = "/nonexistent/key.pem"
        let error = #expect(throws: TLSError.self) { try TLSContext(server: server) }
        #expect(error?.message.contains("/nonexistent/key.pem") == true)
    }
}

/// One client and one echoing server on a loop: the client writes `payload`, the server echoes it,
/// the client closes once it has it all (or either side fails).
private final class Exchange: ListenerDelegate, ConnectionDelegate {
    struct Outcome {
        var echoed: [UInt8] = []
        var serverFailure: String?
        var clientFailure: String?
        var serverProtocol: String?
        var serverVersion: String?
        var clientSubject: String?
        var serverHandshakes = 0
    }

    private let serverContext: TLSContext
    private let payload: [UInt8]
    private var outcome = Outcome()
    private var client: Connection?
    private var open = 0
    private let loop: EventLoop

    private init(loop: EventLoop, serverContext: TLSContext, payload: [UInt8]) {
        self.loop = loop
        self.serverContext = serverContext
        self.payload = payload
    }

    static func run(
        server: TLSServerConfiguration,
        client: TLSClientConfiguration?,
        serverName: String = "127.0.0.1",
        payload: [UInt8]
    ) throws -> Outcome {
        let loop = try EventLoop()
        let exchange = Exchange(loop: loop, serverContext: try TLSContext(server: server), payload: payload)
        let clientContext = try client.map { try TLSContext(client: $0) }
        let listener = try Listener.listen(on: .tcp(host: "127.0.0.1", port: 0), loop: loop, delegate: exchange)
        try Connection.connect(to: listener.endpoint, on: loop) { result in
            guard case .success(let connection) = result else {
                Issue.record("connect failed")
                return
            }
            exchange.client = connection
            exchange.open += 1
            connection.delegate = exchange
            #expect(throws: Never.self) {
                if let clientContext { try connection.secure(with: clientContext.makeSession(serverName: serverName)) }
                try connection.startReading()
                try connection.write(payload)
            }
        }
        loop.runForTest()
        listener.close()
        try loop.close()
        return exchange.outcome
    }

    func listener(_ listener: Listener, didAccept connection: Connection) {
        open += 1
        connection.delegate = self
        let session = serverContext.makeSession()
        session.onHandshakeComplete = { [unowned self] session in
            outcome.serverHandshakes += 1
            outcome.serverProtocol = session.applicationProtocol
            outcome.serverVersion = session.protocolVersion
            outcome.clientSubject = session.peerSubject
        }
        #expect(throws: Never.self) {
            try connection.secure(with: session)
            try connection.startReading()
        }
    }

    func listener(_ listener: Listener, didFailToAccept error: UVError) {}

    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        var copy: [UInt8] = []
        for index in bytes.indices { copy.append(bytes[index]) }
        if connection === client {
            outcome.echoed += copy
            if outcome.echoed.count >= payload.count { connection.closeWhenWritesFlushed() }
        } else {
            #expect(throws: Never.self) { try connection.write(copy) }
        }
    }

    func connectionDidClose(_ connection: Connection, error: UVError?) {
        if connection === client {
            outcome.clientFailure = connection.securityFailure
        } else {
            outcome.serverFailure = connection.securityFailure
        }
        open -= 1
        if open == 0 { loop.stop() }
    }
}
