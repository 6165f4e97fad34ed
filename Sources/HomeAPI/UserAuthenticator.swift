public import HomeService
public import RPCServer

/// A connection authenticated as a user account, through one of its tokens or a client certificate
/// mapped to it (``ClientIdentities``).
public final class UserPrincipal: Principal {
    public let account: AccountID
    /// The token it authenticated with: revoking it ends the connection's rights at its next call.
    /// `nil` for a client certificate's connection.
    public let token: AccessTokenID?
    /// Identifies the connection in change events (its own changes can be told apart).
    public let session: SessionID
    /// The store's token-table version when the token was last found live (see
    /// ``HomeService/HomeStore/isTokenLive(_:checkedVersion:)``).
    private var tokenCheckedVersion = UInt64.max
    /// The connection's last confirmed home membership (see ``HomeService/MembershipMemo``).
    private var membershipMemo: MembershipMemo?

    init(account: AccountID, token: AccessTokenID?, session: SessionID) {
        self.account = account
        self.token = token
        self.session = session
    }

    public var displayName: String { "account \(account)" }

    /// Whether the token this connection authenticated with is still live (a certificate's
    /// connection has none to lose: the mapping is read when the connection authenticates).
    func hasLiveToken(in store: HomeStore) -> Bool {
        guard let token else { return true }
        return store.isTokenLive(token, checkedVersion: &tokenCheckedVersion)
    }

    /// A characteristic's cached value (``HomeService/HomeStore/readValue(_:in:as:memo:)``), the
    /// membership check answered from this connection's memo when it can be.
    func readValue(
        _ id: CharacteristicID,
        in home: HomeID,
        from store: HomeStore
    ) throws(HomeServiceError) -> HomeStore.CachedReading {
        try store.readValue(id, in: home, as: account, memo: &membershipMemo)
    }

    /// The account's role in `home` (``HomeService/HomeStore/role(of:in:memo:)``), from this
    /// connection's memo when it can be.
    func role(in home: HomeID, from store: HomeStore) -> HomeRole? {
        store.role(of: account, in: home, memo: &membershipMemo)
    }
}

/// Resolves bearer tokens through the store (hashed lookup, constant-time digest comparison), and
/// client certificates through the ``ClientIdentities`` mapped to accounts.
public final class UserAuthenticator: Authenticator {
    private let store: HomeStore
    private let identities: ClientIdentities
    private var nextSession: UInt64 = 1

    public init(store: HomeStore, identities: ClientIdentities = ClientIdentities()) {
        self.store = store
        self.identities = identities
    }

    public func principal(forToken token: String) -> (any Principal)? {
        guard let found = store.token(forSecret: token) else { return nil }
        defer { nextSession += 1 }
        return UserPrincipal(account: found.account, token: found.id, session: SessionID(nextSession))
    }

    public func principal(forClientCertificate subject: String) -> (any Principal)? {
        guard let account = identities.accounts[subject], store.account(account) != nil else { return nil }
        defer { nextSession += 1 }
        return UserPrincipal(account: account, token: nil, session: SessionID(nextSession))
    }
}
