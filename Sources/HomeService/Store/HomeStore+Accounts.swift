/// Server accounts and their bearer tokens.
extension HomeStore {
    /// The first account of a new store, with its first token.
    func createOwner() -> String {
        mutationDepth += 1
        defer { endMutation() }
        let account = addAccount(named: "Owner", isOwner: true)
        return addToken(for: account.id).text
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

    /// Issues a new token for `account`; the returned text is never available again.
    /// - Throws: 2 for an unknown account; 17 unless the caller is that account or the owner; 49
    ///   when the account already holds its limit of tokens.
    public func issueToken(
        for account: AccountID,
        by caller: AccountID
    ) throws(HomeServiceError) -> (
        AccessToken, String
    ) {
        try beginMutation()
        defer { endMutation() }
        try requireSelfOrOwner(account, caller, "issue tokens")
        try ObjectLimits.check(
            tokens.count(of: account),
            against: limits.tokensPerAccount,
            "the tokens of account \(account)"
        )
        let (token, text) = addToken(for: account)
        return (token, text)
    }

    /// Revokes a token: it stops resolving at once (and for good once committed).
    /// - Throws: 2 for an unknown token, or one of another account for anyone but the owner.
    public func revokeToken(_ id: AccessTokenID, by caller: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        guard let token = tokens[id], token.account == caller || accounts[caller]?.isOwner == true else {
            throw HomeServiceError(.notFound, "no such token \(id)")
        }
        tokens.remove(id)
        touch(.token(id))
    }

    /// The account a bearer token belongs to, or `nil` for an unknown or revoked token.
    public func account(forToken token: String) -> Account? {
        self.token(forSecret: token).flatMap { accounts[$0.account] }
    }

    /// The live token a bearer token's text names, or `nil`. The text is never compared: it is
    /// hashed and looked up by its SHA-256 (``TokenBook/token(withDigest:)``).
    public func token(forSecret secret: String) -> AccessToken? {
        guard secret.utf8.count <= 256 else { return nil }
        return tokens.token(withDigest: TokenGenerator.hash(secret))
    }

    /// Whether a token is still live (not revoked), for connections that authenticated with it.
    public func isTokenLive(_ id: AccessTokenID) -> Bool {
        tokens[id] != nil
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
        guard tokens[id] != nil else { return false }
        checkedVersion = tokens.version
        return true
    }

    /// Tokens of `account` (never their text).
    public func tokens(of account: AccountID, by caller: AccountID) throws(HomeServiceError) -> [AccessToken] {
        try requireSelfOrOwner(account, caller, "list tokens")
        return tokens.tokens(of: account)
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

    private func addToken(for account: AccountID) -> (token: AccessToken, text: String) {
        let text = TokenGenerator.newToken()
        let token = AccessToken(
            id: .random(),
            account: account,
            hash: TokenGenerator.hash(text),
            createdAt: now,
            sequence: nextSequenceNumber()
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
