public import Foundation
public import HomeProto
import SwiftProtobuf

// Typed calls of the client as a whole (homes, accounts, the store); a home's are in HomeHandle.swift.
// Failures throw ``HomeClientError``; mutations answer once durable.

let homeService = "home.v1.HomeService/"
let accountService = "home.v1.AccountService/"
let adminService = "home.v1.AdminService/"

extension HomeClient {
    // MARK: Homes

    /// The caller's homes, without their contents (see ``HomeHandle/get()``).
    public func listHomes() async throws(HomeClientError) -> [Home] {
        try await call(homeService + "ListHomes", Home_V1_ListHomesRequest(), returning: Home_V1_ListHomesResponse.self)
            .homes
    }

    /// Adds a home administered by the caller (their first becomes primary). Answers with the home
    /// without its contents, as ``listHomes()`` does.
    public func addHome(named name: String) async throws(HomeClientError) -> Home {
        var request = Home_V1_AddHomeRequest()
        request.name = name
        return try await mutate(homeService + "AddHome", request, returning: Home_V1_AddHomeResponse.self).home
    }

    /// Operations on one home.
    public nonisolated func home(_ id: UUID) -> HomeHandle {
        HomeHandle(client: self, id: id)
    }

    // MARK: Accounts

    /// The account the client's token belongs to.
    public func whoAmI() async throws(HomeClientError) -> Account {
        try await call(accountService + "WhoAmI", Home_V1_WhoAmIRequest(), returning: Home_V1_WhoAmIResponse.self)
            .account
    }

    /// Creates an account (owner only).
    public func createAccount(named name: String) async throws(HomeClientError) -> Account {
        var request = Home_V1_CreateAccountRequest()
        request.name = name
        return try await mutate(
            accountService + "CreateAccount",
            request,
            returning: Home_V1_CreateAccountResponse.self
        ).account
    }

    /// Every account (owner only).
    public func listAccounts() async throws(HomeClientError) -> [Account] {
        try await call(
            accountService + "ListAccounts",
            Home_V1_ListAccountsRequest(),
            returning: Home_V1_ListAccountsResponse.self
        )
        .accounts
    }

    /// Issues a token for `account` (the caller's own when `nil`) with `limits` (by default the
    /// calling token's own); the secret is shown only here.
    public func issueToken(
        for account: UUID? = nil,
        limits: TokenRequestLimits = TokenRequestLimits()
    ) async throws(HomeClientError) -> (token: TokenInfo, secret: String) {
        var request = Home_V1_IssueTokenRequest()
        if let account { request.accountID = account.data }
        request.name = limits.name
        request.scope = limits.scope
        request.homeIds = limits.homes.map(\.data)
        request.expiresInSeconds = limits.lifetime.map { max(1, $0.components.seconds) } ?? 0
        let response = try await mutate(
            accountService + "IssueToken",
            request,
            returning: Home_V1_IssueTokenResponse.self
        )
        return (response.token, response.secret)
    }

    /// Revokes a token (the owner any, others their own): calls with it fail with UNAUTHENTICATED
    /// from then on, also on connections it already authenticated.
    public func revokeToken(_ id: UUID) async throws(HomeClientError) {
        var request = Home_V1_RevokeTokenRequest()
        request.tokenID = id.data
        _ = try await mutate(accountService + "RevokeToken", request, returning: Home_V1_RevokeTokenResponse.self)
    }

    /// The tokens of `account` (the caller's own when `nil`; another's for the owner only), without
    /// their secrets.
    public func listTokens(of account: UUID? = nil) async throws(HomeClientError) -> [TokenInfo] {
        var request = Home_V1_ListTokensRequest()
        if let account { request.accountID = account.data }
        return try await call(accountService + "ListTokens", request, returning: Home_V1_ListTokensResponse.self).tokens
    }

    // MARK: The store

    /// Has the server write a consistent copy of its store to a new file named `fileName` in its
    /// backup directory (`homed --backup-directory`, by default the store's directory; owner only).
    /// Every change acknowledged before the call is in the copy. Answers once it is on disk.
    /// - Returns: the absolute path written, on the server's machine, and the copy's size in bytes.
    /// - Throws: a ``HomeClientError`` with HomeKit code 1 when something exists under the name, 3
    ///   for a name that is not a plain file name (or a file the directory does not let the server
    ///   create), 17 for anyone but the owner.
    public func backupStore(named fileName: String) async throws(HomeClientError) -> (path: String, bytes: UInt64) {
        var request = Home_V1_BackupStoreRequest()
        request.fileName = fileName
        let response = try await call(
            adminService + "BackupStore",
            request,
            returning: Home_V1_BackupStoreResponse.self
        )
        return (response.path, response.sizeBytes)
    }
}
