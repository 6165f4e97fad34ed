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

    /// What a cached read needs of a characteristic's accessory: whether it (or its bridge) is
    /// blocked, and whether it is reachable.
    public struct AccessoryState: Hashable, Sendable {
        public var isBlocked: Bool
        public var isReachable: Bool

        public init(isBlocked: Bool, isReachable: Bool) {
            self.isBlocked = isBlocked
            self.isReachable = isReachable
        }
    }

    private var values: [CharacteristicValue?] = []
    private var updatedAt: [Int64] = []
    /// Each slot's accessory state, kept in step by the store whenever an accessory is blocked,
    /// unblocked, reached or lost, so that a cached read answers from the slot alone: looking the
    /// accessory up by its id was about 130 instructions of a 3,400-instruction read.
    private var accessoryStates: [AccessoryState] = []
    /// Slots of removed characteristics, reused before the arrays grow.
    private var freeSlots: [Int32] = []

    public init() {}

    /// Slots in use.
    public var count: Int { values.count - freeSlots.count }

    mutating func reserveCapacity(_ capacity: Int) {
        values.reserveCapacity(capacity)
        updatedAt.reserveCapacity(capacity)
        accessoryStates.reserveCapacity(capacity)
    }

    /// A slot for a new characteristic; its accessory state is unreachable until the store sets it.
    mutating func allocate(value: CharacteristicValue?, at time: Int64) -> Slot {
        let unknown = AccessoryState(isBlocked: false, isReachable: false)
        if let index = freeSlots.popLast() {
            values[Int(index)] = value
            updatedAt[Int(index)] = time
            accessoryStates[Int(index)] = unknown
            return Slot(index: index)
        }
        values.append(value)
        updatedAt.append(time)
        accessoryStates.append(unknown)
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

    /// The state of the slot's accessory, as the store last set it.
    public func accessoryState(_ slot: Slot) -> AccessoryState {
        accessoryStates[Int(slot.index)]
    }

    mutating func setAccessoryState(_ state: AccessoryState, for slot: Slot) {
        accessoryStates[Int(slot.index)] = state
    }

    /// Every slot's accessory unreachable (its block unchanged): start-up, before any accessory has
    /// connected, in one pass over the states instead of a look-up per accessory.
    mutating func markEveryAccessoryUnreachable() {
        for index in accessoryStates.indices { accessoryStates[index].isReachable = false }
    }

}
