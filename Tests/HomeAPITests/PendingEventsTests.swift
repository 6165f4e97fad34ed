import HomeService
import Testing

@testable import HomeAPI

/// The per-subscriber queue: layout changes in order up to the bound, one waiting value per
/// characteristic, revision order kept.
@Suite struct PendingEventsTests {
    let home = HomeID.random()
    let lamp = CharacteristicID.random()
    let fan = CharacteristicID.random()

    func change(_ revision: UInt64, _ event: ChangeEvent, in home: HomeID? = nil) -> HomeChange {
        HomeChange(home: home ?? self.home, revision: revision, time: 0, initiator: .server, event: event)
    }

    func value(_ revision: UInt64, _ characteristic: CharacteristicID, _ level: Int64) -> HomeChange {
        change(revision, ChangeEvent(.characteristicValueUpdated, object: characteristic.raw, value: .int(level)))
    }

    func drain(_ queue: inout PendingEvents) -> [(UInt64, UInt64)] {
        var out: [(UInt64, UInt64)] = []
        while let entry = queue.popFirst() {
            if case .change(let change, let skipped) = entry { out.append((change.revision, skipped)) }
        }
        return out
    }

    @Test func layoutChangesQueueInOrderUpToTheBound() {
        var queue = PendingEvents(maxLayoutEvents: 3)
        for revision in 1...3 {
            #expect(queue.append(change(UInt64(revision), ChangeEvent(.roomAdded))) == .queued)
        }
        #expect(queue.append(change(4, ChangeEvent(.roomAdded))) == .overflow)
        // A change that ends the subscriber's membership always gets in.
        #expect(queue.append(change(5, ChangeEvent(.homeRemoved)), always: true) == .queued)
        #expect(drain(&queue).map(\.0) == [1, 2, 3, 5])
        #expect(queue.isEmpty && queue.layoutCount == 0)
    }

    @Test func aNewValueReplacesTheWaitingOneAndMovesBehindLaterChanges() {
        var queue = PendingEvents(maxLayoutEvents: 10)
        _ = queue.append(value(1, lamp, 10))
        _ = queue.append(value(2, fan, 1))
        _ = queue.append(change(3, ChangeEvent(.roomAdded)))
        _ = queue.append(value(4, lamp, 20))
        _ = queue.append(value(5, lamp, 30))
        #expect(queue.count == 3)
        let drained = drain(&queue)
        #expect(drained.map(\.0) == [2, 3, 5])
        #expect(drained.map(\.1) == [0, 0, 2])
    }

    @Test func valuesNeverCountAgainstTheLayoutBoundAndStayOnePerCharacteristic() {
        var queue = PendingEvents(maxLayoutEvents: 1)
        for revision in 1...10_000 {
            #expect(queue.append(value(UInt64(revision), revision % 2 == 0 ? lamp : fan, Int64(revision))) == .queued)
        }
        #expect(queue.count == 2 && queue.layoutCount == 0)
        let drained = drain(&queue)
        #expect(drained.map(\.0) == [9_999, 10_000])
        #expect(drained.map(\.1) == [4_999, 4_999])
    }

    @Test func oneStreamingCharacteristicIsReplacedInPlace() {
        // A stalled subscriber of one characteristic used to leave a hole per value and compact
        // every 64: copying and reallocating on every change the others got.
        var queue = PendingEvents(maxLayoutEvents: 10)
        _ = queue.append(change(1, ChangeEvent(.roomAdded)))
        for revision in 2...1_000 { _ = queue.append(value(UInt64(revision), lamp, Int64(revision))) }
        #expect(queue.count == 2 && queue.slotCount == 2)
        let drained = drain(&queue)
        #expect(drained.map(\.0) == [1, 1_000])
        #expect(drained.map(\.1) == [0, 998])
    }

    /// What the hub counts against a connection's bound: every entry waiting, once, and the bytes
    /// of the prepared messages; a replaced value adds nothing, and taking or dropping gives back.
    @Test func heldBytesFollowWhatWaits() {
        var queue = PendingEvents(maxLayoutEvents: 10)
        _ = queue.append(value(1, lamp, 10))
        _ = queue.append(change(2, ChangeEvent(.roomAdded)))
        #expect(queue.heldBytes == 2 * PendingEvents.bytesPerEntry)
        _ = queue.append(value(3, lamp, 20))
        #expect(queue.heldBytes == 2 * PendingEvents.bytesPerEntry)
        queue.append(encoded: [UInt8](repeating: 0, count: 1_000))
        #expect(queue.heldBytes == 3 * PendingEvents.bytesPerEntry + 1_000)
        _ = queue.popFirst()
        #expect(queue.heldBytes == 2 * PendingEvents.bytesPerEntry + 1_000)
        queue.removeAll()
        #expect(queue.heldBytes == 0)
    }

    /// docs/API.md bounds a waiting event at 256 bytes (the objects it names are read when sent).
    @Test func aWaitingEventIsSmall() {
        #expect(MemoryLayout<PendingEvents.Entry?>.stride <= 256)
        #expect(MemoryLayout<HomeChange>.stride <= 256)
    }
}
