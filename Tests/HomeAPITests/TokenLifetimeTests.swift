import Foundation
import HomeClient
import HomeProto
import Testing
import Wire

/// Tokens over time, through a real homed whose clock the test moves (no sleeps): expiry, its
/// message, its streams, last use; and the tokens a server never issued.
@Suite(.timeLimit(.minutes(3))) struct TokenLifetimeTests {
    /// The failure a call gets: its status and message.
    static func failure(_ body: () async throws -> Void) async -> (StatusCode, String)? {
        do {
            try await body()
            return nil
        } catch let error as HomeClientError {
            return (error.status, error.message)
        } catch {
            return (.unknown, "\(error)")
        }
    }

    @Test func anExpiredTokenIsRefusedWithItsOwnMessageAndItsStreamEnds() async throws {
        let server = try await HomedProcess.launch(movableClock: true)
        let owner = server.client()
        let home = try await owner.addHome(named: "Timed").id.uuid
        let (token, secret) = try await owner.issueToken(
            limits: TokenRequestLimits(name: "an hour", scope: .read, lifetime: .seconds(3_600))
        )
        #expect(token.expiresMs > 0 && !token.expired && token.scope == .read)
        let client = server.client(token: secret)
        _ = try await client.listHomes()
        var stream = try await opened(client, ChangeOptions(homes: [home]))
        try server.advanceClock(by: 3_600_000)
        // The open connection's next call, a new connection's first, and the stream: all refused
        // as expired, the stream within the upkeep's second.
        let onConnection = await Self.failure { _ = try await client.listHomes() }
        #expect(onConnection?.0 == .unauthenticated && onConnection?.1.contains("expired at") == true)
        let fresh = server.client(token: secret)
        let onNewConnection = await Self.failure { _ = try await fresh.listHomes() }
        #expect(onNewConnection?.0 == .unauthenticated && onNewConnection?.1.contains("expired at") == true)
        let onStream = await Self.failure { while try await stream.next() != nil {} }
        #expect(
            onStream?.0 == .unauthenticated && onStream?.1.contains("expired at") == true,
            "\(String(describing: onStream))"
        )
        // Listed as expired for a day, then forgotten: refused as unknown.
        let listed = try await owner.listTokens().first { $0.id == token.id }
        #expect(listed?.expired == true)
        try server.advanceClock(by: 86_400_000 + 61_000)
        try await eventually(within: 10) { try await owner.listTokens().allSatisfy { $0.id != token.id } }
        let forgotten = await Self.failure { _ = try await server.client(token: secret).listHomes() }
        #expect(forgotten?.0 == .unauthenticated && forgotten?.1.contains("unknown or was revoked") == true)
        for client in [owner, client, fresh] { await client.close() }
    }

    @Test func missingUnknownRevokedAndExpiredTokensAreToldApart() async throws {
        let server = try await HomedProcess.launch(movableClock: true)
        let other = try await HomedProcess.launch()
        let owner = server.client()
        let (revoked, revokedSecret) = try await owner.issueToken()
        try await owner.revokeToken(revoked.id.uuid)
        let (_, expiredSecret) = try await owner.issueToken(limits: TokenRequestLimits(lifetime: .seconds(60)))
        try server.advanceClock(by: 60_000)
        let cases: [(String, String, String)] = [
            ("missing", "", "authenticate first"),
            ("made up", "hrt_" + String(repeating: "7", count: 64), "unknown or was revoked"),
            ("another server's", other.ownerToken, "unknown or was revoked"),
            ("revoked", revokedSecret, "unknown or was revoked"),
            ("expired", expiredSecret, "expired at"),
        ]
        for (what, secret, words) in cases {
            let client = server.client(token: secret)
            let refused = await Self.failure { _ = try await client.whoAmI() }
            #expect(
                refused?.0 == .unauthenticated && refused?.1.contains(words) == true,
                "\(what): \(String(describing: refused))"
            )
            await client.close()
        }
        await owner.close()
    }

    @Test func listTokensShowsEachTokensLimitsAndLastUse() async throws {
        let server = try await HomedProcess.launch(movableClock: true)
        let owner = server.client()
        let home = try await owner.addHome(named: "Listed").id.uuid
        let limits = TokenRequestLimits(name: "wall panel", scope: .control, homes: [home], lifetime: .seconds(86_400))
        let (token, secret) = try await owner.issueToken(limits: limits)
        let before = try #require(try await owner.listTokens().first { $0.id == token.id })
        #expect(before.name == "wall panel" && before.scope == .control && before.homeIds == [home.data])
        #expect(before.lastUsedMs == 0 && before.expiresMs == token.expiresMs)
        let panel = server.client(token: secret)
        _ = try await panel.home(home).get()
        let after = try #require(try await owner.listTokens().first { $0.id == token.id })
        #expect(after.lastUsedMs >= before.createdMs)
        // The panel's own listing shows only the tokens within its limits: itself.
        #expect(try await panel.listTokens().map(\.id) == [token.id])
        await panel.close()
        // Written lazily (once a minute, and as the server drains): the use survives a restart.
        await owner.close()
        server.stop()
        try await server.start()
        let reloaded = try await server.client().listTokens().first { $0.id == token.id }
        #expect(reloaded?.lastUsedMs == after.lastUsedMs)
    }
}
