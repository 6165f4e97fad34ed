import HomeService

/// What one subscriber has yet to receive, oldest first, in bounded memory.
///
/// Layout changes queue in order, at most `maxLayoutEvents` of them: one more overflows, and the
/// subscriber is resynchronised instead (nothing is dropped silently). A characteristic's value
/// change replaces the one still waiting for the same characteristic: the old entry is left as a
/// hole, the new one goes to the back with the count of values it replaced, so the queue stays in
/// revision order and holds at most one value per characteristic. Holes are compacted once they
/// are the larger part.
struct PendingEvents {
    enum Entry {
        /// A change from a home's log; `skipped` values of the same characteristic were replaced.
        case change(HomeChange, skipped: UInt64)
        /// A message built in advance (a snapshot or a resync, which carry a whole home).
        case encoded([UInt8])
    }

    /// The answer to ``append(_:)``.
    enum Admission: Equatable {
        case queued
        /// Too many layout changes are waiting: the caller resynchronises the subscriber.
        case overflow
    }

    let maxLayoutEvents: Int
    private var slots: [Entry?] = []
    private var head = 0
    /// Where each characteristic's waiting value is, by slot index.
    private var valueSlots: [CharacteristicID: Int] = [:]
    private(set) var layoutCount = 0
    private(set) var count = 0
    /// Bytes of the prepared messages waiting (whole homes: the large part of what waits).
    private(set) var encodedByteCount = 0

    /// What an entry waiting costs in memory, about: its slot and, for a value, its index entry
    /// (measured: 2.7 million values waiting in 900 streams took 206 MB).
    static let bytesPerEntry = 80

    /// The memory this queue holds, about: its entries, and the prepared messages' bytes.
    var heldBytes: Int { count * Self.bytesPerEntry + encodedByteCount }

    init(maxLayoutEvents: Int) {
        precondition(maxLayoutEvents > 0, "a subscriber must be able to wait for one event")
        self.maxLayoutEvents = maxLayoutEvents
    }

    var isEmpty: Bool { count == 0 }
    /// Slots in use, holes included (for tests).
    var slotCount: Int { slots.count - head }

    /// Queues a change; a value change replaces the waiting value of its characteristic.
    /// - Parameter always: queue it even past the bound (a change that ends the subscriber's
    ///   membership must reach it, and no resync can follow it).
    mutating func append(_ change: HomeChange, always: Bool = false) -> Admission {
        guard let characteristic = Self.characteristic(of: change) else {
            guard layoutCount < maxLayoutEvents || always else { return .overflow }
            insert(.change(change, skipped: 0))
            return .queued
        }
        var skipped: UInt64 = 0
        if let index = valueSlots[characteristic], case .change(_, let earlier)? = slots[index] {
            skipped = earlier &+ 1
            if index == slots.count - 1 {
                // Already the newest entry (one characteristic streaming to a stalled subscriber):
                // replaced where it is, the queue stays in order without a hole to compact.
                slots[index] = .change(change, skipped: skipped)
                return .queued
            }
            slots[index] = nil
            count -= 1
        }
        insert(.change(change, skipped: skipped))
        return .queued
    }

    /// Queues a prepared message; it counts as a layout event but is never refused (a resync must
    /// always get through).
    mutating func append(encoded bytes: [UInt8]) {
        insert(.encoded(bytes))
        encodedByteCount += bytes.count
    }

    /// Takes the oldest entry.
    mutating func popFirst() -> Entry? {
        while head < slots.count {
            defer { head += 1 }
            guard let entry = slots[head] else { continue }
            slots[head] = nil
            count -= 1
            if case .encoded(let bytes) = entry { encodedByteCount -= bytes.count }
            if let characteristic = Self.characteristic(of: entry) {
                valueSlots[characteristic] = nil
            } else {
                layoutCount -= 1
            }
            return entry
        }
        return nil
    }

    /// Drops everything waiting (before a resync, which replaces it).
    mutating func removeAll() {
        self = PendingEvents(maxLayoutEvents: maxLayoutEvents)
    }

    private mutating func insert(_ entry: Entry) {
        compactIfMostlyHoles()
        if let characteristic = Self.characteristic(of: entry) {
            valueSlots[characteristic] = slots.count
        } else {
            layoutCount += 1
        }
        slots.append(entry)
        count += 1
    }

    private static func characteristic(of change: HomeChange) -> CharacteristicID? {
        guard change.event.kind == .characteristicValueUpdated, let raw = change.event.object else { return nil }
        return CharacteristicID(raw)
    }

    private static func characteristic(of entry: Entry) -> CharacteristicID? {
        guard case .change(let change, _) = entry else { return nil }
        return characteristic(of: change)
    }

    /// Compacts when holes and delivered slots outnumber the live entries.
    private mutating func compactIfMostlyHoles() {
        guard slots.count >= 64, slots.count > 2 * count else { return }
        var compacted: [Entry?] = []
        compacted.reserveCapacity(count * 2)
        valueSlots.removeAll(keepingCapacity: true)
        for index in head..<slots.count {
            guard let entry = slots[index] else { continue }
            if let characteristic = Self.characteristic(of: entry) { valueSlots[characteristic] = compacted.count }
            compacted.append(entry)
        }
        slots = compacted
        head = 0
    }
}
