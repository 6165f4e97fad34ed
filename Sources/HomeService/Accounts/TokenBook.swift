/// The server's bearer tokens: each by id, found by the SHA-256 of its text (the text itself is
/// never kept), with a version that moves at every change (an add, a removal, an expiry) so that a
/// connection re-checks its token only after one.
@usableFromInline
struct TokenBook {
    private var tokens: [AccessTokenID: AccessToken] = [:]
    private var idsByHash: [[UInt8]: AccessTokenID] = [:]
    /// Tokens found expired by ``expire(at:)``: no longer live, still listed (and told apart from
    /// unknown ones) until ``HomeStore/tidyTokens()`` forgets them.
    private var expired: Set<AccessTokenID> = []
    /// The earliest expiry of a token not yet found expired: ``expire(at:)`` has nothing to do before.
    private(set) var nextExpiry = Int64.max
    /// Tokens whose last use changed since ``takeUsed()``: their rows are written lazily.
    private var used: Set<AccessTokenID> = []
    /// Counts changes (adds, removals and expiries).
    @usableFromInline private(set) var version: UInt64 = 0

    subscript(id: AccessTokenID) -> AccessToken? { tokens[id] }

    /// Whether `id` names a token that is neither revoked nor found expired.
    func isLive(_ id: AccessTokenID) -> Bool { tokens[id] != nil && !expired.contains(id) }

    mutating func add(_ token: AccessToken) {
        tokens[token.id] = token
        idsByHash[token.hash] = token.id
        if let expiry = token.limits.expiresAt { nextExpiry = min(nextExpiry, expiry) }
        version &+= 1
    }

    /// Removes the token and returns it; `nil` when there is none.
    @discardableResult
    mutating func remove(_ id: AccessTokenID) -> AccessToken? {
        guard let token = tokens.removeValue(forKey: id) else { return nil }
        idsByHash[token.hash] = nil
        expired.remove(id)
        used.remove(id)
        version &+= 1
        return token
    }

    /// Marks the tokens expired at `now`; returns whether any was.
    mutating func expire(at now: Int64) -> Bool {
        guard now >= nextExpiry else { return false }
        var next = Int64.max
        for token in tokens.values where !expired.contains(token.id) {
            guard let expiry = token.limits.expiresAt else { continue }
            if now >= expiry { expired.insert(token.id) } else { next = min(next, expiry) }
        }
        nextExpiry = next
        version &+= 1
        return true
    }

    /// Records a call's use of `id` at `time`.
    mutating func noteUse(of id: AccessTokenID, at time: Int64) {
        guard tokens[id] != nil else { return }
        tokens[id]!.lastUsedAt = time
        used.insert(id)
    }

    /// The tokens used since the last call, whose rows need writing.
    mutating func takeUsed() -> Set<AccessTokenID> {
        defer { used = [] }
        return used
    }

    /// The tokens that expired before `time`.
    func expired(before time: Int64) -> [AccessTokenID] {
        expired.filter { id in tokens[id]?.limits.expiresAt.map { $0 < time } ?? false }
    }

    /// The token whose text hashes to `digest`, live or expired. The stored digest is compared in
    /// constant time, so the time taken says nothing about how much of a guess was right.
    func token(withDigest digest: [UInt8]) -> AccessToken? {
        guard let id = idsByHash[digest], let token = tokens[id],
            TokenGenerator.constantTimeEqual(token.hash, digest)
        else { return nil }
        return token
    }

    /// How many tokens `account` holds.
    func count(of account: AccountID) -> Int {
        tokens.values.lazy.filter { $0.account == account }.count
    }

    /// The tokens of `account`, oldest first.
    func tokens(of account: AccountID) -> [AccessToken] {
        tokens.values.filter { $0.account == account }.sorted { $0.sequence < $1.sequence }
    }
}
