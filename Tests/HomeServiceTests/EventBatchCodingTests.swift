import Foundation
import SQLite
import Testing

@testable import HomeService

/// A commit's events of a home are stored as one `event_batch` row (`RowCoding.encodeEvents`).
@Suite struct EventBatchCodingTests {
    let home = HomeID(UniqueIdentifier(high: 1, low: 2))
    let account = AccountID(UniqueIdentifier(high: 3, low: 4))
    let accessory = AccessoryID(UniqueIdentifier(high: 5, low: 6))

    func changes(from first: UInt64, count: Int) -> [HomeChange] {
        (0..<count).map { index in
            var event = ChangeEvent(.characteristicValueUpdated)
            event.object = UniqueIdentifier(high: 7, low: UInt64(index))
            event.value = index % 2 == 0 ? .int(Int64(index) - 5) : .string("v\(index)")
            // Initiators that repeat and change; times that go back as well as forward.
            let initiator: Initiator = index < 3 ? .account(account) : index == 3 ? .server : .accessory(accessory)
            return HomeChange(
                home: home,
                revision: first + UInt64(index),
                time: 1_790_000_000_000 + Int64(index % 3) * 1_000 - Int64(index),
                initiator: initiator,
                event: event
            )
        }
    }

    @Test func aBatchDecodesToTheEventsItWasMadeOf() throws {
        let events = changes(from: 41, count: 9)
        let row = RowCoding.eventBatch(events[...])
        #expect(row[1] == .integer(41) && row[2] == .integer(49))
        #expect(try RowCoding.changes(inBatch: row) == events)
        // A value update costs well under a row of its own (which repeated the home's 16 bytes).
        guard case .blob(let bytes) = row[3] else {
            Issue.record("events are not a blob")
            return
        }
        #expect(bytes.count < 9 * 48)
    }

    @Test func aBatchThatDisagreesWithItsRangeIsCorrupt() throws {
        let events = changes(from: 10, count: 4)
        var row = RowCoding.eventBatch(events[...])
        for (first, last) in [(10, 12), (10, 14), (11, 13), (0, 3), (13, 10), (1, Int64.max)] {
            row[1] = .integer(Int64(first))
            row[2] = .integer(last)
            #expect(throws: StoreError.self) { try RowCoding.changes(inBatch: row) }
        }
        row[1] = .integer(10)
        row[2] = .integer(13)
        row[3] = .blob([1, 1, 0])  // an event without an initiator to repeat
        #expect(throws: StoreError.self) { try RowCoding.changes(inBatch: row) }
        row[3] = .blob([1, 1, 9])  // an unknown initiator tag
        #expect(throws: StoreError.self) { try RowCoding.changes(inBatch: row) }
    }

    @Test func aCommitsEventsSplitByHomeAndByTheLargestBatch() {
        var batches = EventBatches()
        let other = HomeID(UniqueIdentifier(high: 9, low: 9))
        let many = changes(from: 1, count: EventBatches.maxEventsPerBatch + 3)
        let otherEvent = HomeChange(
            home: other,
            revision: 7,
            time: 0,
            initiator: .server,
            event: ChangeEvent(.homeNameUpdated)
        )
        for (index, event) in many.enumerated() {
            batches.add(event)
            if index == 2 { batches.add(otherEvent) }
        }
        let taken = batches.take()
        #expect(taken.map(\.count) == [EventBatches.maxEventsPerBatch, 3, 1])
        #expect(taken[0].first?.revision == 1 && taken[1].first?.revision == UInt64(EventBatches.maxEventsPerBatch + 1))
        #expect(taken[2].first === otherEvent)
        #expect(batches.isEmpty && batches.take().isEmpty)
    }

    @Test func oneHomesEventsStayInOrderInBatchesOfTheLargestSize() {
        var batches = EventBatches(capacity: 4)
        let few = changes(from: 1, count: 3)
        for event in few { batches.add(event) }
        #expect(batches.take().map { $0.map(\.revision) } == [[1, 2, 3]])
        let many = changes(from: 4, count: 2 * EventBatches.maxEventsPerBatch + 1)
        for event in many { batches.add(event) }
        let taken = batches.take()
        #expect(taken.map(\.count) == [EventBatches.maxEventsPerBatch, EventBatches.maxEventsPerBatch, 1])
        #expect(taken.flatMap { $0.map(\.revision) } == many.map(\.revision))
        #expect(batches.isEmpty)
    }
}
