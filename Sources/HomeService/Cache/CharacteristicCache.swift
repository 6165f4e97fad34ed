/// Every characteristic's last value and when it was set, in dense parallel arrays indexed by a slot
/// each characteristic keeps. A read or write is one array access: no hashing on the hot path once a
/// caller holds the slot.
public struct CharacteristicCache: Sendable {
    /// A characteristic's position in the cache.
    public struct Slot: Hashable, Sendable {
        public let index: Int32
    }

    /// A cached value and its time.
    public struct Entry: Hashable, Sendable {
        /// `nil` until the accessory or a write supplies one.
        public var value: CharacteristicValue?
        /// Milliseconds since the Unix epoch; 0 when there is no value.
        public var updatedAt: Int64

        public init(value: CharacteristicValue?, updatedAt: Int64) {
            self.value = value
            self.updatedAt = updatedAt
        }
    }

    private var values: [CharacteristicValue?] = []
    private var updatedAt: [Int64] = []
    /// Slots of removed characteristics, reused before the arrays grow.
    private var freeSlots: [Int32] = []

    public init() {}

    /// Slots in use.
    public var count: Int { values.count - freeSlots.count }

    mutating func reserveCapacity(_ capacity: Int) {
        values.reserveCapacity(capacity)
        updatedAt.reserveCapacity(capacity)
    }

    mutating func allocate(value: CharacteristicValue?, at time: Int64) -> Slot {
        if let index = freeSlots.popLast() {
            values[Int(index)] = value
            updatedAt[Int(index)] = time
            return Slot(index: index)
        }
        values.append(value)
        updatedAt.append(time)
        return Slot(index: Int32(values.count - 1))
    }

    mutating func release(_ slot: Slot) {
        values[Int(slot.index)] = nil
        updatedAt[Int(slot.index)] = 0
        freeSlots.append(slot.index)
    }

    public subscript(slot: Slot) -> Entry {
        Entry(value: values[Int(slot.index)], updatedAt: updatedAt[Int(slot.index)])
    }

    mutating func set(_ slot: Slot, to value: CharacteristicValue, at time: Int64) {
        values[Int(slot.index)] = value
        updatedAt[Int(slot.index)] = time
    }

}
