/// Idempotency keys: a client that retries a mutation (after UNAVAILABLE or a dropped connection)
/// with the same key gets the first outcome again, and nothing changes twice. A record is written in
/// the same commit as the change it answers for, so it survives a restart exactly when the change
/// does. Outcomes are opaque bytes to the store (the API edge encodes them); the records and their
/// rows are kept by ``IdempotencyRecords``.
extension HomeStore {
    /// One remembered outcome.
    public struct IdempotencyRecord: Sendable {
        public let account: AccountID
        public let key: String
        /// A digest of the request (method and message), to refuse a different request under a used key.
        public let requestDigest: [UInt8]
        public let outcome: [UInt8]
        /// Milliseconds since the Unix epoch.
        public let createdAt: Int64
        /// Names the commit the record (and its change) went into.
        public internal(set) var ticket: CommitTicket
        /// The `idempotency_batch` row the record is stored in (``IdempotencyRecords``).
        var row: Int64 = 0

        /// What the record counts towards ``HomeStore/idempotencyBytesPerAccount``.
        var byteCount: Int { key.utf8.count + requestDigest.count + outcome.count }
    }

    /// How long a key is remembered: 24 hours.
    public static let idempotencyWindow: Int64 = 24 * 3600 * 1000
    /// The longest key accepted, in UTF-8 bytes.
    public static let maximumIdempotencyKeyLength = 128
    /// Keys remembered per account; past it the oldest are forgotten first, so no client can grow
    /// the server without bound.
    public static let idempotencyKeysPerAccount = 10_000
    /// Bytes of records (key, request digest and outcome) remembered per account; past it the
    /// oldest are forgotten first. An outcome is the whole answer, and some answers are large
    /// (`AddAccessory` of a bridge answers with every accessory behind it, about 600 bytes a lamp):
    /// without it, 10,000 answers of 90 KB would be kept, 0.9 GB in memory and in the store, for a
    /// day.
    public static let idempotencyBytesPerAccount = 16 << 20

    /// The outcome remembered for `key`, or `nil` when there is none within the window.
    public func idempotencyRecord(for account: AccountID, key: String) -> IdempotencyRecord? {
        guard let record = idempotency[IdempotencyKey(account: account, key: key)],
            now - record.createdAt < Self.idempotencyWindow
        else { return nil }
        return record
    }

    /// Remembers `outcome` for `key`, in the current mutation's commit (call it inside
    /// ``write(from:_:)``).
    /// - Throws: 3 for an empty key or one over 128 bytes.
    public func recordIdempotency(
        for account: AccountID,
        key: String,
        requestDigest: [UInt8],
        outcome: [UInt8]
    ) throws(HomeServiceError) {
        try Self.checkIdempotencyKey(key)
        try beginMutation()
        defer { endMutation() }
        let record = IdempotencyRecord(
            account: account,
            key: key,
            requestDigest: requestDigest,
            outcome: outcome,
            createdAt: now,
            // The batch this mutation's changes go in (a retry waits for it, not only for the record).
            ticket: CommitTicket(batch: nextBatch)
        )
        forgetIdempotencyKeys(of: account, makingRoomFor: record)
        if let opened = idempotency.add(record, as: IdempotencyKey(account: account, key: key)) {
            touch(.idempotencyBatch(opened))
        }
    }

    /// - Throws: 3 for an empty key or one over 128 bytes.
    public static func checkIdempotencyKey(_ key: String) throws(HomeServiceError) {
        guard !key.isEmpty, key.utf8.count <= maximumIdempotencyKeyLength else {
            throw HomeServiceError(
                .invalidParameter,
                "an idempotency key must be 1 to \(maximumIdempotencyKeyLength) bytes, not \(key.utf8.count)"
            )
        }
    }

    /// Drops the account's keys that are past the window or over the count or the bytes, counting
    /// `incoming` as already kept (oldest first).
    func forgetIdempotencyKeys(of account: AccountID, makingRoomFor incoming: IdempotencyRecord? = nil) {
        idempotency.forget(
            of: account,
            createdThrough: now - Self.idempotencyWindow,
            countLimit: Self.idempotencyKeysPerAccount - (incoming == nil ? 0 : 1),
            byteLimit: Self.idempotencyBytesPerAccount - (incoming?.byteCount ?? 0)
        ) { row in touch(.idempotencyBatch(row)) }
    }
}
