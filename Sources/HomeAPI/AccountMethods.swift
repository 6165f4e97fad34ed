import Foundation
import HomeProto
import HomeService

/// `home.v1.AccountService`: accounts and their bearer tokens.
enum AccountMethods {
    static let service = "home.v1.AccountService/"

    static let all: [APIMethod] = [
        .read(service + "WhoAmI", Home_V1_WhoAmIRequest.self, Home_V1_WhoAmIResponse.self) {
            api,
            _,
            caller throws(APIFailure) in
            guard let account = api.store.account(caller.account) else {
                throw APIFailure(HomeServiceError(.notFound, "the account is gone"))
            }
            var response = Home_V1_WhoAmIResponse()
            response.account = ProtoEncoding.account(account)
            return response
        },
        .mutation(
            service + "CreateAccount",
            Home_V1_CreateAccountRequest.self,
            Home_V1_CreateAccountResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let account = try attempt(field: "name") { () throws(HomeServiceError) in
                try api.store.createAccount(named: request.name, by: caller.account)
            }
            var response = Home_V1_CreateAccountResponse()
            response.account = ProtoEncoding.account(account)
            return response
        },
        .read(
            service + "ListAccounts",
            Home_V1_ListAccountsRequest.self,
            Home_V1_ListAccountsResponse.self
        ) {
            api,
            _,
            caller throws(APIFailure) in
            let accounts = try attempt { () throws(HomeServiceError) in try api.store.allAccounts(by: caller.account) }
            var response = Home_V1_ListAccountsResponse()
            response.accounts = accounts.map(ProtoEncoding.account)
            return response
        },
        .mutation(
            service + "IssueToken",
            Home_V1_IssueTokenRequest.self,
            Home_V1_IssueTokenResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let account = request.accountID.isEmpty ? caller.account : try api.accountID(request.accountID)
            let tokenRequest = try tokenRequest(request, api)
            let (token, secret) = try attempt(object: account.raw, field: "account_id") { () throws(HomeServiceError) in
                try api.store.issueToken(for: account, by: caller.account, within: caller.limits, tokenRequest)
            }
            var response = Home_V1_IssueTokenResponse()
            response.token = ProtoEncoding.token(token, at: api.store.currentTime)
            response.secret = secret
            return response
        },
        .mutation(
            service + "RevokeToken",
            Home_V1_RevokeTokenRequest.self,
            Home_V1_RevokeTokenResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let token: AccessTokenID = try ProtoDecoding.id(request.tokenID, "token_id")
            try attempt(object: token.raw, field: "token_id") { () throws(HomeServiceError) in
                try api.store.revokeToken(token, by: caller.account, within: caller.limits)
            }
            // Its streams end now, like its next call would fail.
            api.subscriptions.endUnauthorized()
            return Home_V1_RevokeTokenResponse()
        },
        .read(
            service + "ListTokens",
            Home_V1_ListTokensRequest.self,
            Home_V1_ListTokensResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let account = request.accountID.isEmpty ? caller.account : try api.accountID(request.accountID)
            let tokens = try attempt(object: account.raw, field: "account_id") { () throws(HomeServiceError) in
                try api.store.tokens(of: account, by: caller.account, within: caller.limits)
            }
            var response = Home_V1_ListTokensResponse()
            let now = api.store.currentTime
            response.tokens = tokens.map { ProtoEncoding.token($0, at: now) }
            return response
        },
    ]

    /// What IssueToken asks for; each field left at its default takes the calling token's limit.
    private static func tokenRequest(
        _ request: Home_V1_IssueTokenRequest,
        _ api: HomeAPI
    ) throws(APIFailure) -> HomeStore.TokenRequest {
        var result = HomeStore.TokenRequest(name: request.name)
        switch request.scope {
        case .unspecified: break
        case .read: result.scope = .read
        case .control: result.scope = .control
        case .full: result.scope = .full
        case .UNRECOGNIZED(let value): throw .invalid("scope", "scope \(value) is not a token scope")
        }
        if !request.homeIds.isEmpty {
            var homes: [HomeID] = []
            for (index, data) in request.homeIds.enumerated() {
                homes.append(try ProtoDecoding.id(data, "home_ids[\(index)]"))
            }
            result.homes = homes
        }
        if request.expiresInSeconds != 0 {
            guard request.expiresInSeconds > 0, request.expiresInSeconds <= HomeStore.maxTokenLifetime / 1000 else {
                throw .invalid("expires_in_seconds", "a token's lifetime is 1 second to 10 years")
            }
            result.lifetime = request.expiresInSeconds * 1000
        }
        return result
    }
}
