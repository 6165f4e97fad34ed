import Foundation
import HomeClient
import TestSupport
import Testing

/// homed over TLS through the Swift SDK: calls and change streams, mutual TLS, refusals with their
/// reason, and a certificate reload while clients keep connecting.
@Suite(.timeLimit(.minutes(3))) struct TLSEndToEndTests {
    /// A homed serving TLS with a copy of the test CA's server certificate (so a test may replace
    /// it), and its TCP port.
    static func launch(
        mutual: Bool = false,
        identities: String? = nil
    ) async throws -> (HomedProcess, Endpoint, certificate: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let certificate = "\(folder)/server.pem"
        let key = "\(folder)/server.key"
        try FileManager.default.copyItem(atPath: TestCertificates.certificate("server"), toPath: certificate)
        try FileManager.default.copyItem(atPath: TestCertificates.key("server"), toPath: key)
        var arguments = ["--tls-cert", certificate, "--tls-key", key]
        if mutual { arguments += ["--tls-client-ca", TestCertificates.certificate("ca")] }
        if let identities { arguments += ["--tls-client-identities", identities] }
        let server = try await HomedProcess.launch(arguments: arguments, capturingLog: true, logLevel: "info")
        return (server, .tcp(host: "127.0.0.1", port: try server.tcpPort()), certificate)
    }

    static func context(trusting ca: String = "ca", certificate: String? = nil) throws -> TLSContext {
        try TLSContext(
            client: TLSClientConfiguration(
                trustedCAPath: TestCertificates.certificate(ca),
                certificateChainPath: certificate.map(TestCertificates.certificate),
                privateKeyPath: certificate.map(TestCertificates.key)
            )
        )
    }

    @Test func sdkCallsAndFollowsChangesOverTLS() async throws {
        let (server, endpoint, _) = try await Self.launch()
        let client = HomeClient(endpoint: endpoint, token: server.ownerToken, tls: try Self.context())
        let home = try await client.addHome(named: "Secure Home")
        #expect(try await client.listHomes().map(\.name) == ["Secure Home"])
        var changes = client.changes(ChangeOptions(homes: [home.id.uuid], snapshot: true)).makeAsyncIterator()
        _ = try await changes.next()  // the snapshot
        let writer = HomeClient(endpoint: endpoint, token: server.ownerToken, tls: try Self.context())
        _ = try await writer.home(home.id.uuid).addRoom(named: "Vault")
        let event = try await changes.next()
        #expect(event.map { "\($0)" }?.contains("Vault") == true)
        await writer.close()
        await client.close()
    }

    @Test func mutualTLSServesAClientCertificateAndRefusesNone() async throws {
        let (server, endpoint, _) = try await Self.launch(mutual: true)
        let member = HomeClient(
            endpoint: endpoint,
            token: server.ownerToken,
            tls: try Self.context(certificate: "client")
        )
        _ = try await member.addHome(named: "Mutual")
        await member.close()

        let stranger = HomeClient(endpoint: endpoint, token: server.ownerToken, tls: try Self.context())
        let error = await #expect(throws: HomeClientError.self) { try await stranger.listHomes() }
        #expect(error?.status == .unavailable)
        #expect(error?.message.contains("certificate required") == true, "\(error?.message ?? "")")
        await stranger.close()
        // The server's unix socket stays plain: local tools need no certificate.
        #expect(try await server.client().listHomes().map(\.name) == ["Mutual"])
    }

    /// A client certificate mapped to an account (--tls-client-identities, reloaded on SIGHUP)
    /// authenticates a connection that sends no token; one mapped to no account does not.
    @Test func clientCertificateMappedToAnAccountStandsForItWithoutAToken() async throws {
        let identities = FileManager.default.temporaryDirectory.appendingPathComponent("ids-\(UUID().uuidString)").path
        try "# none yet\n".write(toFile: identities, atomically: true, encoding: .utf8)
        let (server, endpoint, _) = try await Self.launch(mutual: true, identities: identities)
        let owner = server.client()
        let reader = try await owner.createAccount(named: "Reader")
        await owner.close()

        let before = HomeClient(endpoint: endpoint, token: "", tls: try Self.context(certificate: "client"))
        let refused = await #expect(throws: HomeClientError.self) { try await before.whoAmI() }
        #expect(refused?.status == .unauthenticated)
        await before.close()

        try "account \(reader.uniqueIdentifier.uuidString) CN=reader,O=HomeRPC Tests\n"
            .write(toFile: identities, atomically: true, encoding: .utf8)
        server.send(SIGHUP)
        try await waitForLog(server, containing: "TLS certificate reloaded")
        let mapped = HomeClient(endpoint: endpoint, token: "", tls: try Self.context(certificate: "client"))
        #expect(try await mapped.whoAmI().name == "Reader")
        await mapped.close()
        // Another certificate the CA signed, mapped to nobody: a token is still needed.
        let unmapped = HomeClient(endpoint: endpoint, token: "", tls: try Self.context(certificate: "accessory-client"))
        let error = await #expect(throws: HomeClientError.self) { try await unmapped.whoAmI() }
        #expect(error?.message.hasPrefix("authenticate first") == true)
        await unmapped.close()
    }

    /// A client certificate mapped to an accessory binds the link: attaching another accessory on
    /// it is refused, whatever credential comes with it.
    @Test func clientCertificateMappedToAnAccessoryMayAttachOnlyIt() async throws {
        let identities = FileManager.default.temporaryDirectory.appendingPathComponent("ids-\(UUID().uuidString)").path
        let lamp = UUID()
        try "accessory \(lamp.uuidString) CN=kitchen-lamp,O=HomeRPC Tests\n"
            .write(toFile: identities, atomically: true, encoding: .utf8)
        let (server, endpoint, _) = try await Self.launch(mutual: true, identities: identities)
        var connection = ClientConnection.Configuration()
        connection.tls = try Self.context(certificate: "accessory-client")
        let link = try await AccessoryLinkClient.connect(to: endpoint, connection: connection)
        var other = try link.attach(UUID(), credential: "anything").makeAsyncIterator()
        let error = await #expect(throws: HomeClientError.self) { _ = try await other.next() }
        #expect(error?.status == .permissionDenied)
        #expect(error?.message.contains(lamp.uuidString) == true, "\(error?.message ?? "")")
        // Its own id goes on to the credential check (no such pairing here: UNAUTHENTICATED).
        var own = try link.attach(lamp, credential: "anything").makeAsyncIterator()
        let ownError = await #expect(throws: HomeClientError.self) { _ = try await own.next() }
        #expect(ownError?.status == .unauthenticated)
        await link.close()
        withExtendedLifetime(server) {}
    }

    @Test func serverCertificateOfAnotherCAIsNotRetried() async throws {
        let (server, endpoint, _) = try await Self.launch()
        let client = HomeClient(
            endpoint: endpoint,
            token: server.ownerToken,
            tls: try Self.context(trusting: "other-ca")
        )
        let error = await #expect(throws: HomeClientError.self) { try await client.listHomes() }
        #expect(error?.isSecurityFailure == true)
        #expect(error?.isRetryable == false)
        #expect(error?.message.contains("certificate verify failed") == true, "\(error?.message ?? "")")
        await client.close()
        let log = try String(contentsOfFile: server.logPath, encoding: .utf8)
        #expect(log.contains("TLS failed") && log.contains("unknown ca"))
    }

    @Test func plainClientOnTheTLSPortIsRefusedAndLogged() async throws {
        let (server, endpoint, _) = try await Self.launch()
        let client = HomeClient(endpoint: endpoint, token: server.ownerToken, timeout: .seconds(5))
        await #expect(throws: HomeClientError.self) { try await client.listHomes() }
        await client.close()
        let log = try String(contentsOfFile: server.logPath, encoding: .utf8)
        #expect(log.contains("TLS handshake failed: wrong version number"))
    }

    /// SIGHUP with a new certificate in place while four clients keep opening new TLS connections:
    /// not one call fails, and connections made after the reload get the new certificate.
    @Test func certificateReloadsUnderLoadWithoutAFailedCall() async throws {
        let (server, endpoint, certificate) = try await Self.launch()
        let token = server.ownerToken
        let context = try Self.context()
        let reloaded = Tally()
        let rounds = Tally()
        let load = (0..<4).map { _ in
            Task {
                var calls = 0
                var afterReload = 0
                // Each round on a new client: a new connection, so a new TLS handshake.
                while afterReload < 20 {
                    let wasReloaded = reloaded.value > 0
                    let client = HomeClient(endpoint: endpoint, token: token, tls: context)
                    for _ in 0..<5 { _ = try await client.listHomes() }
                    await client.close()
                    calls += 5
                    rounds.add()
                    if wasReloaded { afterReload += 1 }
                }
                return calls
            }
        }
        // The load runs before the reload (each client has made a few rounds), and across it.
        try await rounds.reach(12)
        let directory = (certificate as NSString).deletingLastPathComponent
        for (from, to) in [("renewed-server.pem", "server.pem"), ("renewed-server.key", "server.key")] {
            let source = "\(TestCertificates.directory)/\(from)"
            let data = try Data(contentsOf: URL(fileURLWithPath: source))
            try data.write(to: URL(fileURLWithPath: "\(directory)/\(to)"), options: .atomic)
        }
        server.send(SIGHUP)
        try await waitForLog(server, containing: "TLS certificate reloaded")
        reloaded.add()
        var calls = 0
        for task in load { calls += try await task.value }
        #expect(calls >= 400)
        #expect(try Self.serverSubject(at: endpoint).contains("localhost renewed"))
        let log = try String(contentsOfFile: server.logPath, encoding: .utf8)
        #expect(!log.contains("TLS failed"))
    }

    /// The subject of the certificate the server presents now, as `openssl s_client` reports it.
    static func serverSubject(at endpoint: Endpoint) throws -> String {
        guard case .tcp(let host, let port) = endpoint else { return "" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "s_client", "-connect", "\(host):\(port)", "-CAfile", TestCertificates.certificate("ca"), "-alpn", "hrpc/1",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").first { $0.hasPrefix("subject=") }.map(String.init) ?? ""
    }

    func waitForLog(_ server: HomedProcess, containing text: String) async throws {
        let path = server.logPath
        try await eventually(within: 10) {
            (try? String(contentsOfFile: path, encoding: .utf8))?.contains(text) == true
        }
    }
}
