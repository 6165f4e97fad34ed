import Testing

@testable import HomeService

/// The writer's map of each home's `event_batch` rows by number.
@Suite struct EventBatchIndexTests {
    let kitchen: [UInt8] = Array(repeating: 1, count: 16)
    let garage: [UInt8] = Array(repeating: 2, count: 16)

    @Test func aBatchMustStartAfterItsHomesLast() throws {
        var index = EventBatchIndex()
        try index.check(home: kitchen, firstRevision: 1)
        index.add(number: 1, home: kitchen, lastRevision: 4)
        #expect(throws: StoreError.self) { try index.check(home: kitchen, firstRevision: 4) }
        #expect(throws: StoreError.self) { try index.check(home: kitchen, firstRevision: 2) }
        try index.check(home: kitchen, firstRevision: 5)
        // Another home's revisions are its own.
        try index.check(home: garage, firstRevision: 1)
    }

    @Test func aTrimTakesWholeBatchesOfItsHomeOldestFirst() {
        var index = EventBatchIndex()
        index.add(number: 1, home: kitchen, lastRevision: 2)
        index.add(number: 2, home: garage, lastRevision: 1)
        index.add(number: 3, home: kitchen, lastRevision: 5)
        index.add(number: 4, home: kitchen, lastRevision: 9)
        // The batch ending at 9 reaches past 6: it stays.
        #expect(index.removeBatches(of: kitchen, through: 6) == [1, 3])
        #expect(index.removeBatches(of: kitchen, through: 6) == [])
        #expect(index.removeBatches(of: garage, through: 0) == [])
        #expect(index.removeBatches(of: garage, through: .max) == [2])
        #expect(index.removeBatches(of: kitchen, through: .max) == [4])
    }

    @Test func aHomeWithNoBatchesLeftStartsAfresh() throws {
        var index = EventBatchIndex()
        index.add(number: 7, home: kitchen, lastRevision: 30)
        #expect(index.removeBatches(of: kitchen, through: .max) == [7])
        try index.check(home: kitchen, firstRevision: 1)
    }
}
