import Foundation
import Testing

@testable import HomeService

/// Tokens issued with a name, a scope, homes and an expiry: what the store grants, refuses,
/// expires, records and keeps, on the harness's hand-moved clock.
@Suite struct TokenLimitsTests {
    @Test(arguments: StoreKind.allCases)
    func aTokensLimitsAndLastUseSurviveAReopen(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let anna = try harness.account("Anna")
        let home = try harness.store.addHome(named: "Flat", as: anna).id
        let request = HomeStore.TokenRequest(name: "dashboard", scope: .read, homes: [home], lifetime: 3_600_000)
        let (token, secret) = try harness.store.issueToken(for: anna, by: anna, within: .unlimited, request)
        let expected = TokenLimits(scope: .read, homes: [home], expiresAt: harness.clock.now + 3_600_000)
        #expect(token.name == "dashboard" && token.limits == expected)
        harness.clock.advance(by: 120_000)
        harness.store.noteUse(of: token.id)
        #expect(try harness.store.tidyTokens())
        try harness.reopen()
        let reloaded = try #require(harness.store.token(forSecret: secret))
        #expect(reloaded.name == "dashboard" && reloaded.limits == expected)
        #expect(reloaded.lastUsedAt == harness.clock.now)
    }

    @Test func aTokenExpiresIsToldApartForADayAndIsThenForgotten() throws {
        let harness = try StoreHarness(.memory)
        let store = harness.store
        let anna = try harness.account("Anna")
        let lifetime: Int64 = 60_000
        let (token, secret) = try store.issueToken(
            for: anna,
            by: anna,
            within: .unlimited,
            HomeStore.TokenRequest(lifetime: lifetime)
        )
        #expect(!store.expireTokens())
        harness.clock.advance(by: lifetime - 1)
        #expect(store.token(forSecret: secret)?.id == token.id)
        #expect(!store.expireTokens() && store.isTokenLive(token.id))
        harness.clock.advance(by: 1)
        // Refused at once, whether or not the once-a-second sweep has run.
        #expect(store.token(forSecret: secret) == nil)
        #expect(store.tokenRecord(forSecret: secret)?.id == token.id)
        #expect(store.expireTokens() && !store.isTokenLive(token.id))
        #expect(!store.expireTokens(), "nothing more expires")
        // Listed, and told apart from an unknown token, for a day; then forgotten.
        #expect(try store.tokens(of: anna, by: anna, within: .unlimited).map(\.id) == [token.id])
        harness.clock.advance(by: HomeStore.expiredTokenRetention)
        #expect(!(try store.tidyTokens()))
        harness.clock.advance(by: 1)
        #expect(try store.tidyTokens())
        #expect(store.tokenRecord(forSecret: secret) == nil)
        #expect(try store.tokens(of: anna, by: anna, within: .unlimited).isEmpty)
    }

    @Test func aTokenIssuesAndRevokesOnlyWithinItsOwnLimits() throws {
        let harness = try StoreHarness(.memory)
        let store = harness.store
        let anna = try harness.account("Anna")
        let flat = try store.addHome(named: "Flat", as: anna).id
        let cabin = try store.addHome(named: "Cabin", as: anna).id
        let expiry = harness.clock.now + 3_600_000
        let caller = TokenLimits(scope: .full, homes: [flat], expiresAt: expiry)
        // Defaults take the caller's limits.
        let (inherited, _) = try store.issueToken(for: anna, by: anna, within: caller)
        #expect(inherited.limits == caller)
        let (narrower, _) = try store.issueToken(
            for: anna,
            by: anna,
            within: caller,
            HomeStore.TokenRequest(scope: .control, lifetime: 60_000)
        )
        #expect(narrower.limits == TokenLimits(scope: .control, homes: [flat], expiresAt: harness.clock.now + 60_000))
        let wider: [(String, HomeStore.TokenRequest)] = [
            ("another home", HomeStore.TokenRequest(homes: [flat, cabin])),
            ("a later expiry", HomeStore.TokenRequest(lifetime: 7_200_000)),
        ]
        for (what, request) in wider {
            #expect(
                codeThrown { _ = try store.issueToken(for: anna, by: anna, within: caller, request) }
                    == .insufficientPrivileges,
                "\(what)"
            )
        }
        // A read token may not issue a full one (the API refuses it the method; the store too).
        let reader = TokenLimits(scope: .read, homes: nil, expiresAt: nil)
        #expect(
            codeThrown {
                _ = try store.issueToken(for: anna, by: anna, within: reader, HomeStore.TokenRequest(scope: .full))
            }
                == .insufficientPrivileges
        )
        let (unlimited, _) = try store.issueToken(for: anna, by: anna, within: .unlimited)
        #expect(codeThrown { try store.revokeToken(unlimited.id, by: anna, within: caller) } == .insufficientPrivileges)
        try store.revokeToken(narrower.id, by: anna, within: caller)
        #expect(store.tokenRecord(narrower.id) == nil)
        // A limited token lists only the tokens within its limits.
        #expect(try store.tokens(of: anna, by: anna, within: caller).map(\.id) == [inherited.id])
    }

    @Test func badRequestsAreRefusedAndChangeNothing() throws {
        let harness = try StoreHarness(.memory)
        let store = harness.store
        let anna = try harness.account("Anna")
        let bob = try harness.account("Bob")
        let bobsHome = try store.addHome(named: "Bob's", as: bob).id
        let refused: [(String, HomeStore.TokenRequest, HomeKitErrorCode)] = [
            ("a long name", HomeStore.TokenRequest(name: String(repeating: "n", count: 65)), .invalidParameter),
            ("a home of another account", HomeStore.TokenRequest(homes: [bobsHome]), .notFound),
            ("a home that does not exist", HomeStore.TokenRequest(homes: [HomeID.random()]), .notFound),
            (
                "too many homes",
                HomeStore.TokenRequest(homes: (0...HomeStore.maxTokenHomes).map { _ in HomeID.random() }),
                .invalidParameter
            ),
            ("no lifetime", HomeStore.TokenRequest(lifetime: 0), .invalidParameter),
            ("over ten years", HomeStore.TokenRequest(lifetime: HomeStore.maxTokenLifetime + 1), .invalidParameter),
        ]
        for (what, request, code) in refused {
            #expect(
                codeThrown { _ = try store.issueToken(for: anna, by: anna, within: .unlimited, request) } == code,
                "\(what)"
            )
        }
        #expect(try store.tokens(of: anna, by: anna, within: .unlimited).isEmpty)
    }
}
