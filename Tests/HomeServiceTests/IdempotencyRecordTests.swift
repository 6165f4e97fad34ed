import Testing

@testable import HomeService

@Suite struct IdempotencyRecordTests {
    /// A retry that finds the record must wait for the commit of the change it stands for: the
    /// record names that batch from the moment it is made, before the scope submits it.
    @Test(arguments: StoreKind.allCases)
    func aRecordNamesTheBatchOfItsChange(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let owner = harness.owner
        store.waitForCommits()
        var ticketInsideScope: CommitTicket?
        let (result, ticket) = store.write { () throws(HomeServiceError) in
            let home = try store.addHome(named: "Home", as: owner)
            try store.recordIdempotency(for: owner, key: "retry-1", requestDigest: [1], outcome: [2])
            ticketInsideScope = store.idempotencyRecord(for: owner, key: "retry-1")?.ticket
            return home
        }
        _ = try result.get()
        #expect(ticketInsideScope == ticket)
        #expect(store.idempotencyRecord(for: owner, key: "retry-1")?.ticket == ticket)
        var acknowledged: [StoreError?] = []
        store.whenCommitted(ticket) { acknowledged.append($0) }
        store.waitForCommits()
        #expect(acknowledged.count == 1 && acknowledged[0] == nil)
    }

    /// Records `keys` with outcomes of `outcomeSize` bytes, a millisecond apart (records of the same
    /// millisecond may load in any order), in one commit.
    func record(_ keys: [String], outcomeSize: Int, in harness: StoreHarness) {
        let outcome = [UInt8](repeating: 7, count: outcomeSize)
        _ = harness.store.write { () throws(HomeServiceError) in
            for key in keys {
                harness.clock.advance(by: 1)
                try harness.store.recordIdempotency(for: harness.owner, key: key, requestDigest: [1], outcome: outcome)
            }
        }
        harness.store.waitForCommits()
    }

    /// The keys of `keys` the store still remembers for the owner.
    func remembered(_ keys: [String], in harness: StoreHarness) -> [String] {
        keys.filter { harness.store.idempotencyRecord(for: harness.owner, key: $0) != nil }
    }

    /// Outcomes are whole answers, some large: an account's records are held to a number of bytes,
    /// the oldest forgotten first, and a restart keeps the same ones.
    @Test(arguments: StoreKind.allCases)
    func anAccountsRecordsAreHeldToTheirBytes(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let keys = (0..<20).map { "key-\($0)" }
        let megabyte = 1 << 20
        record(keys, outcomeSize: megabyte, in: harness)
        // 16 MiB is 16 outcomes of 1 MiB without their keys and digests: 15 fit.
        let kept = Array(keys.suffix(15))
        #expect(HomeStore.idempotencyBytesPerAccount == 16 * megabyte)
        #expect(remembered(keys, in: harness) == kept)
        try harness.reopen()
        #expect(remembered(keys, in: harness) == kept)
        // After the restart the budget still counts what was loaded.
        record(["key-20"], outcomeSize: megabyte, in: harness)
        #expect(remembered(keys + ["key-20"], in: harness) == Array(kept.dropFirst()) + ["key-20"])
    }

    @Test(arguments: StoreKind.allCases)
    func anAccountsRecordsAreHeldToTheirCount(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let keys = (0...HomeStore.idempotencyKeysPerAccount).map { "key-\($0)" }
        record(keys, outcomeSize: 1, in: harness)
        #expect(remembered(keys, in: harness) == Array(keys.dropFirst()))
        try harness.reopen()
        #expect(remembered(keys, in: harness) == Array(keys.dropFirst()))
    }

    /// An account's records of one commit share a row, and a row goes once every record in it is
    /// forgotten: a row per record made the writer insert one and delete one per keyed write.
    @Test(arguments: StoreKind.allCases)
    func aCommitsRecordsShareARowThatGoesWithTheLastOfThem(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let guest = try harness.account("Guest")
        _ = harness.store.write { () throws(HomeServiceError) in
            for key in ["a", "b", "c"] {
                try harness.store.recordIdempotency(for: harness.owner, key: key, requestDigest: [1], outcome: [2])
            }
            try harness.store.recordIdempotency(for: guest, key: "a", requestDigest: [1], outcome: [3])
        }
        harness.store.waitForCommits()
        // One row for the owner's three, one for the guest's.
        #expect(try harness.rowCount(of: StoreSchema.idempotencyBatch) == 2)
        record(["d"], outcomeSize: 1, in: harness)
        #expect(try harness.rowCount(of: StoreSchema.idempotencyBatch) == 3)
        // A day later the first commit's records are past the window, and their row goes.
        harness.clock.advance(by: HomeStore.idempotencyWindow - 2)
        record(["e"], outcomeSize: 1, in: harness)
        #expect(remembered(["a", "b", "c", "d", "e"], in: harness) == ["d", "e"])
        // The guest's row stays until the guest's next write (or the next start) forgets it.
        #expect(try harness.rowCount(of: StoreSchema.idempotencyBatch) == 4 - 1)
        // The guest's record, as old, is forgotten at the next start, and its row goes too.
        try harness.reopen()
        harness.store.waitForCommits()
        #expect(remembered(["a", "b", "c", "d", "e"], in: harness) == ["d", "e"])
        #expect(harness.store.idempotencyRecord(for: guest, key: "a") == nil)
        #expect(try harness.rowCount(of: StoreSchema.idempotencyBatch) == 2)
    }

    /// A key forgotten and used again is stored twice, in an old row that still holds newer records
    /// and in a new one: a restart remembers the later outcome.
    @Test(arguments: StoreKind.allCases)
    func aKeyUsedAgainAfterItWasForgottenReloadsItsLaterOutcome(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let keys = (0..<HomeStore.idempotencyKeysPerAccount).map { "key-\($0)" }
        record(keys, outcomeSize: 1, in: harness)
        // key-0 is forgotten to make room, then used again with another outcome.
        record(["extra"], outcomeSize: 1, in: harness)
        #expect(harness.store.idempotencyRecord(for: harness.owner, key: "key-0") == nil)
        _ = harness.store.write { () throws(HomeServiceError) in
            try harness.store.recordIdempotency(for: harness.owner, key: "key-0", requestDigest: [9], outcome: [9])
        }
        harness.store.waitForCommits()
        try harness.reopen()
        #expect(harness.store.idempotencyRecord(for: harness.owner, key: "key-0")?.outcome == [9])
        #expect(harness.store.idempotencyRecord(for: harness.owner, key: "key-1") == nil)
        #expect(remembered(Array(keys.suffix(5)) + ["extra"], in: harness) == Array(keys.suffix(5)) + ["extra"])
    }
}
