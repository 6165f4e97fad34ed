import Testing

@testable import HomeService

/// A server defers submission and hands each loop iteration's changes to the writer at once.
@Suite struct DeferredSubmissionTests {
    @Test(arguments: StoreKind.allCases)
    func changesWaitForSubmissionAndShareOneBatch(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let owner = harness.owner
        store.waitForCommits()
        store.defersSubmission = true
        let (first, firstTicket) = store.write { () throws(HomeServiceError) in
            try store.addHome(named: "First", as: owner)
        }
        let (second, secondTicket) = store.write(from: SessionID(7)) { () throws(HomeServiceError) in
            let home = try store.addHome(named: "Second", as: owner)
            try store.recordIdempotency(for: owner, key: "retry-1", requestDigest: [1], outcome: [2])
            return home
        }
        let firstHome = try first.get()
        _ = try second.get()
        #expect(firstTicket == secondTicket, "one iteration, one batch")
        #expect(store.currentTicket == secondTicket)
        // A retry under the key before the batch is submitted still waits for that batch.
        #expect(store.idempotencyRecord(for: owner, key: "retry-1")?.ticket == secondTicket)

        var acknowledged: [StoreError?] = []
        store.whenCommitted(secondTicket) { acknowledged.append($0) }
        #expect(acknowledged.isEmpty)
        // Changes are not logged for subscribers until committed.
        #expect(store.logs[firstHome.id]?.count ?? 0 == 0)

        store.submitQueued()
        store.waitForCommits()
        #expect(acknowledged.count == 1 && acknowledged[0] == nil)
        #expect((store.logs[firstHome.id]?.count ?? 0) > 0)

        try harness.reopen()
        #expect(Set(harness.store.homes(of: owner).map(\.name)) == ["First", "Second"])
    }
}
