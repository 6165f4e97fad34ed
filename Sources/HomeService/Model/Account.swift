/// A user account of the server. Its id is what homes list as a member; it never reveals a login.
public struct Account: Hashable, Sendable {
    public let id: AccountID
    public internal(set) var name: String
    /// The account created on first start: may create accounts and issue tokens for them.
    public let isOwner: Bool
    public internal(set) var primaryHome: HomeID?
    /// Milliseconds since the Unix epoch.
    public let createdAt: Int64
    let sequence: Int64
}

/// A bearer token's record. The token itself is shown once, when issued; only its hash is kept.
public struct AccessToken: Hashable, Sendable {
    public let id: AccessTokenID
    public let account: AccountID
    /// SHA-256 of the token.
    let hash: [UInt8]
    public let createdAt: Int64
    let sequence: Int64
}
