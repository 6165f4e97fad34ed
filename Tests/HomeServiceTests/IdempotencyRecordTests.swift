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
}
