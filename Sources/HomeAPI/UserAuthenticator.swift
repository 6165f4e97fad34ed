public import HomeService
public import RPCServer
import Synchronization

/// A connection authenticated as a user account, through one of its tokens.
public final class UserPrincipal: Principal {
    public let account: AccountID
    /// The token it authenticated with: revoking it ends the connection's rights at its next call.
    public let token: AccessTokenID
    /// Identifies the connection in change events (its own changes can be told apart).
    public let session: SessionID
    /// The store's token-table version when the token was last found live (see
    /// ``HomeService/HomeStore/isTokenLive(_:checkedVersion:)``). Only the loop thread uses it; an
    /// atomic because a principal is `Sendable` (a relaxed access is a plain load or store).
    private let tokenCheckedVersion = Atomic<UInt64>(.max)
    /// The connection's last confirmed home membership (see ``HomeService/MembershipMemo``). Only
    /// the loop thread uses it; behind a mutex because a principal is `Sendable`.
    private let membershipMemo = Mutex<MembershipMemo?>(nil)

    init(account: AccountID, token: AccessTokenID, session: SessionID) {
        self.account = account
        self.token = token
        self.session = session
    }

    public var displayName: String { "account \(account)" }

    /// Whether the token this connection authenticated with is still live.
    func hasLiveToken(in store: HomeStore) -> Bool {
        var version = tokenCheckedVersion.load(ordering: .relaxed)
        guard store.isTokenLive(token, checkedVersion: &version) else { return false }
        tokenCheckedVersion.store(version, ordering: .relaxed)
        return true
    }

    /// A characteristic's cached value (``HomeService/HomeStore/readValue(_:in:as:memo:)``), the
    /// membership check answered from this connection's memo when it can be.
    func readValue(
        _ id: CharacteristicID,
        in home: HomeID,
        from store: HomeStore
    ) throws(HomeServiceError) -> HomeStore.CachedReading {
        try membershipMemo.withLock { (memo) throws(HomeServiceError) in
            try store.readValue(id, in: home, as: account, memo: &memo)
        }
    }
}

/// Resolves bearer tokens through the store (hashed lookup, constant-time digest comparison).
public final class UserAuthenticator: Authenticator {
    private let store: HomeStore
    private var nextSession: UInt64 = 1

    public init(store: HomeStore) {
        self.store = store
    }

    public func principal(forToken token: String) -> (any Principal)? {
        guard let found = store.token(forSecret: token) else { return nil }
        defer { nextSession += 1 }
        return UserPrincipal(account: found.account, token: found.id, session: SessionID(nextSession))
    }
}
