import Foundation
import HomeAPI
import HomeClient
import HomeProto
import HomeService
import SwiftProtobuf
import Testing
import Wire

/// Every method × {read, control, full} × {a home in the token's scope, one out of it}, over RPC.
/// The caller is the server's owner (so its role never refuses a call) with a token limited to one
/// home; the expected answer comes from the method's declared scope and `every_home` option
/// (`HomeAPI.methods`, generated from proto/home/v1): the one table the server enforces.
@Suite(.serialized) struct TokenScopeMatrixTests {
    typealias Fixture = PermissionMatrixTests.Fixture

    /// What a call gets: `nil` for success, else the status and HomeKit code.
    static func expected(_ method: APIMethod, scope: HomeService.TokenScope, inScope: Bool) -> (StatusCode, Int32)? {
        // A home outside the token's homes is answered as one the account cannot see.
        let namesAHome = method.role == .member || method.role == .administrator
        if namesAHome && !inScope { return (.notFound, 2) }
        if method.scope > scope { return (.permissionDenied, 17) }
        // Adding a home or copying the store reaches past any token limited to homes.
        if method.spansEveryHome { return (.permissionDenied, 17) }
        return nil
    }

    @Test func everyMethodForEveryScopeInAndOutOfItsHomes() async throws {
        let fixture = try await Fixture()
        let elsewhere = try await fixture.owner.addHome(named: "Elsewhere").id.uuid
        var cells = 0
        for method in HomeAPI.methods {
            let short = String(method.name.split(separator: "/").last!)
            for scope in HomeService.TokenScope.allCases {
                let objects = try await fixture.home()
                let request = try await PermissionMatrixTests.request(
                    for: short,
                    objects,
                    caller: .owner,
                    fixture
                )
                // Out of scope first: refused or not touching the cell's home, it leaves the
                // request valid for the token in scope.
                for inScope in [false, true] {
                    let home = inScope ? objects.home.uuid : elsewhere
                    let limits = TokenRequestLimits(
                        name: "\(short) \(scope.name)",
                        scope: Home_V1_TokenScope(rawValue: scope.rawValue)!,
                        homes: [home]
                    )
                    let (token, secret) = try await fixture.owner.issueToken(limits: limits)
                    let client = fixture.server.client(token: secret)
                    let outcome = try await Self.outcome(
                        of: method,
                        short,
                        request,
                        objects,
                        scope: scope,
                        client
                    )
                    await client.close()
                    // The cell's token goes (the account holds at most 100); RevokeToken's cell
                    // may have revoked a spare of its own already.
                    try? await fixture.owner.revokeToken(token.id.uuid)
                    let expected = Self.expected(method, scope: scope, inScope: inScope)
                    #expect(
                        outcome?.0 == expected?.0 && outcome?.1 == expected?.1,
                        "\(short), \(scope.name) token, home \(inScope ? "in" : "out of") scope: got \(outcome.map { "\($0.0.name) \($0.1)" } ?? "OK"), expected \(expected.map { "\($0.0.name) \($0.1)" } ?? "OK")"
                    )
                    cells += 1
                }
                await fixture.endCell()
            }
        }
        #expect(cells == HomeAPI.methods.count * HomeService.TokenScope.allCases.count * 2)
        for client in fixture.clients.values { await client.close() }
        await fixture.simulators.close()
    }

    /// The call's failure (status and HomeKit code), or `nil` when it succeeded.
    static func outcome(
        of method: APIMethod,
        _ short: String,
        _ request: any SwiftProtobuf.Message,
        _ objects: PermissionMatrixTests.Objects,
        scope: HomeService.TokenScope,
        _ client: HomeClient
    ) async throws -> (StatusCode, Int32)? {
        do {
            switch short {
            case "BrowseAccessories":
                var browser = try await client.browseAccessories().makeAsyncIterator()
                _ = try await browser.next()
            case "Subscribe":
                // The stream's first message (the home's snapshot) or its failure.
                var stream = client.changes(ChangeOptions(homes: [objects.home.uuid], snapshot: true))
                    .makeAsyncIterator()
                _ = try await stream.next()
            case "RevokeToken" where scope == .full:
                // A token within the caller's limits: one it issues itself.
                let (spare, _) = try await client.issueToken()
                try await client.revokeToken(spare.id.uuid)
            default:
                _ = try await client.call(method.name, request, returning: Google_Protobuf_Empty.self)
            }
            return nil
        } catch let error as HomeClientError {
            return (error.status, error.homeKitCode ?? 0)
        }
    }
}
