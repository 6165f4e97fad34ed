internal import Crypto

extension ID where Kind == IDKind.User {
    /// An account's identifier as a member of one home (HomeKit's `HMUser.uniqueIdentifier`): never
    /// the account's own id, which is what an administrator names to add someone, and different in
    /// each of the account's homes, so that members of one home cannot tell who in another home is
    /// the same person, nor learn an account id to add to homes of their own.
    ///
    /// Derived, not stored: the first 16 bytes of SHA-256 over a label, the home's id and the
    /// account's, marked as a version 8 (custom) UUID. The same membership always has the same id,
    /// also in events replayed from before a restart; from a user id nobody can work back to the
    /// account.
    public init(account: AccountID, home: HomeID) {
        var hasher = SHA256()
        hasher.update(data: Self.derivationLabel)
        hasher.update(data: home.raw.bytes)
        hasher.update(data: account.raw.bytes)
        // A SHA-256 digest has 32 bytes, so its first 16 always make an identifier.
        let id = UniqueIdentifier(bytes: Array(hasher.finalize()).prefix(16))!
        self.init(
            UniqueIdentifier(
                high: (id.high & ~0xF000) | 0x8000,  // version 8
                low: (id.low & ~(0xC << 60)) | (0x8 << 60)  // RFC 9562 variant
            )
        )
    }

    private static let derivationLabel = Array("homerpc user id v1".utf8)
}
