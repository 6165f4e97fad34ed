import Foundation
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
    /// What its token may do; `nil` when it may do anything its account may, for good (an
    /// unlimited token, a client certificate): the check on every call is then one comparison.
    let limits: TokenLimits?
    /// When its token expires (ms since the Unix epoch), `Int64.max` for never.
    let expiresAt: Int64
    /// The monotonic time (ns) from which a call's use of the token is noted again: once a minute.
    private var nextUseNote: UInt64 = 0
    /// The store's token-table version when the token was last found live (see
    /// ``HomeService/HomeStore/isTokenLive(_:checkedVersion:)``).
    private var tokenCheckedVersion = UInt64.max
    /// The connection's last confirmed home membership (see ``HomeService/MembershipMemo``).
    private var membershipMemo: MembershipMemo?

    init(account: AccountID, token: AccessTokenID?, limits: TokenLimits, session: SessionID) {
        self.account = account
        self.token = token
        self.session = session
        self.limits = limits == .unlimited ? nil : limits
        expiresAt = limits.expiresAt ?? .max
    }

    public var displayName: String { "account \(account)" }

    /// Whether the token this connection authenticated with is still live (a certificate's
    /// connection has none to lose: the mapping is read when the connection authenticates).
    func hasLiveToken(in store: HomeStore) -> Bool {
        guard let token else { return true }
        return store.isTokenLive(token, checkedVersion: &tokenCheckedVersion)
            && (expiresAt == .max || store.currentTime < expiresAt)
    }

    /// Notes a call's use of the token in the store, at most once a minute. `callStart` is the
    /// call's start on the monotonic clock (``RPCServer/ServerCall/startedAt``, read for its latency
    /// anyway): no clock is read for this.
    func noteUse(in store: HomeStore, at callStart: UInt64) {
        guard let token, callStart >= nextUseNote else { return }
        nextUseNote = callStart + 60_000_000_000
        store.noteUse(of: token)
    }

    /// Whether its token allows acting in `home`.
    func mayActIn(_ home: HomeID) -> Bool { limits?.covers(home) ?? true }

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

/// Why a token's calls are refused, in words that tell a missing token (RPCServer's), an unknown or
/// revoked one and an expired one apart, and say nothing of other accounts.
enum TokenMessages {
    static let revokedOnConnection = "the token this connection authenticated with was revoked"
    static let revokedOnStream = "the token this stream authenticated with was revoked"

    static func expired(at time: Int64) -> String {
        "the bearer token expired at \(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(time) / 1000)))"
    }

    /// Why `principal`'s calls are refused at `now`: its token has expired or was revoked.
    static func refusal(of principal: UserPrincipal, at now: Int64, onStream: Bool) -> String {
        if now >= principal.expiresAt { return expired(at: principal.expiresAt) }
        return onStream ? revokedOnStream : revokedOnConnection
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
        return UserPrincipal(
            account: found.account,
            token: found.id,
            limits: found.limits,
            session: SessionID(nextSession)
        )
    }

    public func refusal(forToken token: String) -> String {
        guard let found = store.tokenRecord(forSecret: token), let expiry = found.limits.expiresAt else {
            return RPCServer.tokenRefusedMessage
        }
        return TokenMessages.expired(at: expiry)
    }

    public func principal(forClientCertificate subject: String) -> (any Principal)? {
        guard let account = identities.accounts[subject], store.account(account) != nil else { return nil }
        defer { nextSession += 1 }
        return UserPrincipal(account: account, token: nil, limits: .unlimited, session: SessionID(nextSession))
    }
}
