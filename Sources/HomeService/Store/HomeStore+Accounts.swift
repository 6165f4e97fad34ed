/// Server accounts and their bearer tokens.
extension HomeStore {
    /// The first account of a new store, with its first token.
    func createOwner() -> String {
        mutationDepth += 1
        defer { endMutation() }
        let account = addAccount(named: "Owner", isOwner: true)
        return addToken(for: account.id, named: "owner's first token", limits: .unlimited).text
    }

    /// The account created on first start.
    public var owner: Account? { accounts.values.first(where: \.isOwner) }

    /// Creates an account. Only the owner may.
    /// - Throws: 17 for anyone else; the naming codes for a bad name.
    public func createAccount(named name: String, by caller: AccountID) throws(HomeServiceError) -> Account {
        try beginMutation()
        defer { endMutation() }
        try requireOwner(caller, "create accounts")
        try NameRules.validate(name, kind: "account")
        let account = addAccount(named: name, isOwner: false)
        return account
    }

    /// What a new token asks for; each `nil` takes the issuing token's limit.
    public struct TokenRequest: Sendable {
        public var name: String
        public var scope: TokenScope?
        public var homes: [HomeID]?
        /// Milliseconds from now.
        public var lifetime: Int64?

        public init(name: String = "", scope: TokenScope? = nil, homes: [HomeID]? = nil, lifetime: Int64? = nil) {
            self.name = name
            self.scope = scope
            self.homes = homes
            self.lifetime = lifetime
        }
    }

    /// The longest name a token may be given, in UTF-8 bytes.
    public static let maxTokenNameBytes = 64
    /// The most homes a token may be limited to.
    public static let maxTokenHomes = 100
    /// The longest a token may be issued for: ten years.
    public static let maxTokenLifetime: Int64 = 10 * 365 * 86_400_000
    /// How long an expired token is still listed, and told apart from an unknown one, before it is
    /// forgotten.
    public static let expiredTokenRetention: Int64 = 86_400_000

    /// Issues a new token for `account`; the returned text is never available again.
    /// - Parameters:
    ///   - limits: the calling token's limits (``TokenLimits/unlimited`` for a client certificate):
    ///     the new token is never wider.
    /// - Throws: 2 for an unknown account, or a home the account is not a member of; 3 for a name
    ///   too long, too many homes, or a lifetime out of range; 17 unless the caller is that account
    ///   or the owner, or for limits wider than the caller's; 49 when the account already holds its
    ///   limit of tokens.
    public func issueToken(
        for account: AccountID,
        by caller: AccountID,
        within limits: TokenLimits,
        _ request: TokenRequest = TokenRequest()
    ) throws(HomeServiceError) -> (
        AccessToken, String
    ) {
        try beginMutation()
        defer { endMutation() }
        try requireSelfOrOwner(account, caller, "issue tokens")
        let granted = try grantedLimits(for: account, request, within: limits)
        try ObjectLimits.check(
            tokens.count(of: account),
            against: self.limits.tokensPerAccount,
            "the tokens of account \(account)"
        )
        let (token, text) = addToken(for: account, named: request.name, limits: granted)
        return (token, text)
    }

    /// The limits `request` asks for, checked, with the caller's where it asks for none.
    private func grantedLimits(
        for account: AccountID,
        _ request: TokenRequest,
        within limits: TokenLimits
    ) throws(HomeServiceError) -> TokenLimits {
        guard request.name.utf8.count <= Self.maxTokenNameBytes else {
            throw HomeServiceError(
                .invalidParameter,
                "a token's name is at most \(Self.maxTokenNameBytes) bytes",
                field: "name"
            )
        }
        var granted = limits
        if let scope = request.scope { granted.scope = scope }
        if let homes = request.homes {
            guard homes.count <= Self.maxTokenHomes else {
                throw HomeServiceError(
                    .invalidParameter,
                    "a token names at most \(Self.maxTokenHomes) homes",
                    field: "home_ids"
                )
            }
            for (index, home) in homes.enumerated() where self.homes[home]?.members[account] == nil {
                // As for any home the account cannot see: it may not exist at all.
                throw HomeServiceError(.notFound, "no such home \(home)", field: "home_ids[\(index)]")
            }
            granted.homes = Set(homes)
        }
        if let lifetime = request.lifetime {
            guard lifetime > 0, lifetime <= Self.maxTokenLifetime else {
                throw HomeServiceError(
                    .invalidParameter,
                    "a token's lifetime is 1 second to 10 years",
                    field: "expires_in_seconds"
                )
            }
            granted.expiresAt = now + lifetime
        }
        guard limits.covers(granted) else {
            throw HomeServiceError(
                .insufficientPrivileges,
                "a token may issue only tokens within its own scope, homes and expiry",
                field: ""
            )
        }
        return granted
    }

    /// Revokes a token: it stops resolving at once (and for good once committed).
    /// - Parameter limits: the calling token's: a limited token revokes only tokens within them.
    /// - Throws: 2 for an unknown token, or one of another account for anyone but the owner; 17
    ///   for a token wider than the caller's.
    public func revokeToken(
        _ id: AccessTokenID,
        by caller: AccountID,
        within limits: TokenLimits
    ) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        guard let token = tokens[id], token.account == caller || accounts[caller]?.isOwner == true else {
            throw HomeServiceError(.notFound, "no such token \(id)")
        }
        guard limits.covers(token.limits) else {
            throw HomeServiceError(.insufficientPrivileges, "a token may revoke only tokens within its own limits")
        }
        tokens.remove(id)
        touch(.token(id))
    }

    /// The account a bearer token belongs to, or `nil` for an unknown, revoked or expired token.
    public func account(forToken token: String) -> Account? {
        self.token(forSecret: token).flatMap { accounts[$0.account] }
    }

    /// The live token a bearer token's text names, or `nil` (``tokenRecord(forSecret:)``).
    public func token(forSecret secret: String) -> AccessToken? {
        guard let token = tokenRecord(forSecret: secret), !token.hasExpired(at: now) else { return nil }
        return token
    }

    /// The token a bearer token's text names, live or expired (an expired one is kept a day, so
    /// that its holder can be told), or `nil`. The text is never compared: it is hashed and looked
    /// up by its SHA-256 (``TokenBook/token(withDigest:)``).
    public func tokenRecord(forSecret secret: String) -> AccessToken? {
        guard secret.utf8.count <= 256 else { return nil }
        return tokens.token(withDigest: TokenGenerator.hash(secret))
    }

    /// Whether a token is still live (neither revoked nor found expired by ``expireTokens()``),
    /// for connections that authenticated with it.
    public func isTokenLive(_ id: AccessTokenID) -> Bool {
        tokens.isLive(id)
    }

    /// The token `id` names, live or expired; `nil` once revoked.
    public func tokenRecord(_ id: AccessTokenID) -> AccessToken? {
        tokens[id]
    }

    /// Whether a token is still live, looked up only if the token table changed since
    /// `checkedVersion`, which a live answer updates: a connection checks its token on every call,
    /// and revocations are rare (so the unchanged case is inlined into the caller).
    @inlinable
    public func isTokenLive(_ id: AccessTokenID, checkedVersion: inout UInt64) -> Bool {
        checkedVersion == tokens.version || isTokenLiveLookingUp(id, checkedVersion: &checkedVersion)
    }

    @usableFromInline
    func isTokenLiveLookingUp(_ id: AccessTokenID, checkedVersion: inout UInt64) -> Bool {
        guard tokens.isLive(id) else { return false }
        checkedVersion = tokens.version
        return true
    }

    /// Marks the tokens whose expiry has come (a cheap check until the earliest): the server calls
    /// it every second and ends their streams when it returns `true`.
    public func expireTokens() -> Bool {
        tokens.expire(at: now)
    }

    /// Records that a call used token `id` now (kept in memory; ``tidyTokens()`` writes it).
    public func noteUse(of id: AccessTokenID) {
        tokens.noteUse(of: id, at: now)
    }

    /// In a write: writes the last uses noted since the last time, and forgets tokens expired for
    /// longer than ``expiredTokenRetention``. Returns whether it changed anything.
    @discardableResult
    public func tidyTokens() throws(HomeServiceError) -> Bool {
        try beginMutation()
        defer { endMutation() }
        let used = tokens.takeUsed()
        for id in used { touch(.token(id)) }
        let forgotten = tokens.expired(before: now - Self.expiredTokenRetention)
        for id in forgotten {
            tokens.remove(id)
            touch(.token(id))
        }
        return !used.isEmpty || !forgotten.isEmpty
    }

    /// Tokens of `account` (never their text) within `limits`, the calling token's.
    public func tokens(
        of account: AccountID,
        by caller: AccountID,
        within limits: TokenLimits
    ) throws(HomeServiceError) -> [AccessToken] {
        try requireSelfOrOwner(account, caller, "list tokens")
        return tokens.tokens(of: account).filter { limits.covers($0.limits) }
    }

    private func addAccount(named name: String, isOwner: Bool) -> Account {
        let account = Account(
            id: .random(),
            name: name,
            isOwner: isOwner,
            primaryHome: nil,
            createdAt: now,
            sequence: nextSequenceNumber()
        )
        accounts[account.id] = account
        touch(.account(account.id))
        return account
    }

    private func addToken(
        for account: AccountID,
        named name: String,
        limits: TokenLimits
    ) -> (token: AccessToken, text: String) {
        let text = TokenGenerator.newToken()
        let token = AccessToken(
            id: .random(),
            account: account,
            hash: TokenGenerator.hash(text),
            createdAt: now,
            sequence: nextSequenceNumber(),
            name: name,
            limits: limits
        )
        tokens.add(token)
        touch(.token(token.id))
        return (token, text)
    }

    func requireOwner(_ caller: AccountID, _ what: String) throws(HomeServiceError) {
        guard accounts[caller]?.isOwner == true else {
            throw HomeServiceError(.insufficientPrivileges, "only the server's owner may \(what)")
        }
    }

    private func requireSelfOrOwner(_ account: AccountID, _ caller: AccountID, _ what: String) throws(HomeServiceError)
    {
        // Rights first, so that nobody but the owner learns which account ids exist.
        guard account == caller || accounts[caller]?.isOwner == true else {
            throw HomeServiceError(.insufficientPrivileges, "only the account itself or the owner may \(what)")
        }
        guard accounts[account] != nil else { throw HomeServiceError(.notFound, "no such account \(account)") }
    }
}
