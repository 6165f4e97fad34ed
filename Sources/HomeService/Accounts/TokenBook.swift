/// The server's bearer tokens: each by id, found by the SHA-256 of its text (the text itself is
/// never kept), with a version that moves at every change so that a connection re-checks its token
/// only after one.
@usableFromInline
struct TokenBook {
    private var tokens: [AccessTokenID: AccessToken] = [:]
    private var idsByHash: [[UInt8]: AccessTokenID] = [:]
    /// Counts changes (adds and removals).
    @usableFromInline private(set) var version: UInt64 = 0

    subscript(id: AccessTokenID) -> AccessToken? { tokens[id] }

    mutating func add(_ token: AccessToken) {
        tokens[token.id] = token
        idsByHash[token.hash] = token.id
        version &+= 1
    }

    /// Removes the token and returns it; `nil` when there is none.
    @discardableResult
    mutating func remove(_ id: AccessTokenID) -> AccessToken? {
        guard let token = tokens.removeValue(forKey: id) else { return nil }
        idsByHash[token.hash] = nil
        version &+= 1
        return token
    }

    /// The token whose text hashes to `digest`. The stored digest is compared in constant time, so
    /// the time taken says nothing about how much of a guess was right.
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
