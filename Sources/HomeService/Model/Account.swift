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
    /// What its issuer called it.
    public let name: String
    /// What it may do: its scope, homes and expiry.
    public let limits: TokenLimits
    /// When a call last used it (milliseconds since the Unix epoch, to the minute), 0 for never.
    public internal(set) var lastUsedAt: Int64 = 0

    /// Whether it has expired at `now`.
    public func hasExpired(at now: Int64) -> Bool { limits.expiresAt.map { now >= $0 } ?? false }
}

/// What a token may do, each scope including the ones before it (docs/API.md, "Tokens and their
/// scope"). A method names the least scope a token needs (`home.v1.scope`).
public enum TokenScope: Int, Comparable, Sendable, CaseIterable {
    /// Reads and subscriptions.
    case read = 1
    /// Also operating the home: characteristic writes, identify, executing action sets.
    case control = 2
    /// Everything its account may do.
    case full = 3

    public static func < (lhs: TokenScope, rhs: TokenScope) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Its stored and logged name.
    public var name: String {
        switch self {
        case .read: "read"
        case .control: "control"
        case .full: "full"
        }
    }

    public init?(name: String) {
        guard let scope = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = scope
    }
}

/// A token's limits: the scope it is capped at, the homes it may act in, when it expires.
public struct TokenLimits: Hashable, Sendable {
    public var scope: TokenScope
    /// The homes it may act in; `nil` for every home of its account.
    public var homes: Set<HomeID>?
    /// When it stops being accepted (milliseconds since the Unix epoch); `nil` for never.
    public var expiresAt: Int64?

    /// A token that may do anything its account may, for good.
    public static let unlimited = TokenLimits(scope: .full, homes: nil, expiresAt: nil)

    public init(scope: TokenScope, homes: Set<HomeID>?, expiresAt: Int64?) {
        self.scope = scope
        self.homes = homes
        self.expiresAt = expiresAt
    }

    /// Whether it may act in `home`.
    public func covers(_ home: HomeID) -> Bool { homes?.contains(home) ?? true }

    /// Whether everything `other` allows, these limits allow too: what a token may issue or revoke.
    public func covers(_ other: TokenLimits) -> Bool {
        guard other.scope <= scope else { return false }
        if let homes {
            guard let others = other.homes, others.isSubset(of: homes) else { return false }
        }
        if let expiresAt {
            guard let otherExpiry = other.expiresAt, otherExpiry <= expiresAt else { return false }
        }
        return true
    }
}
