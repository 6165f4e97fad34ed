/// Every characteristic, stored densely at its cache slot, with an index from id to slot.
///
/// A dictionary of characteristics keeps each record in a hash bucket, and buckets come in powers
/// of two at most three quarters full: 500,000 characteristics took 2^20 buckets of 248 bytes
/// (260 MB). Here the records sit in one array sized by the cache's slots, and only the 4-byte slot
/// is hashed by id. Removing a characteristic drops its id; its stale record stays until its slot
/// is reused by the next characteristic, as the cache's value does.
struct CharacteristicTable {
    private var slots: [CharacteristicID: Int32] = [:]
    private var records: [Characteristic] = []

    var count: Int { slots.count }
    var isEmpty: Bool { slots.isEmpty }

    /// Every stored characteristic, in no particular order.
    var all: [Characteristic] { slots.values.map { records[Int($0)] } }

    mutating func reserveCapacity(_ capacity: Int) {
        slots.reserveCapacity(capacity)
        records.reserveCapacity(capacity)
    }

    /// Setting a characteristic stores it at its own slot, which the cache has just allocated: the
    /// next one past the end, or a freed one.
    subscript(id: CharacteristicID) -> Characteristic? {
        get {
            guard let slot = slots[id] else { return nil }
            return records[Int(slot)]
        }
        set {
            guard let characteristic = newValue else {
                slots[id] = nil
                return
            }
            precondition(characteristic.id == id, "a characteristic is stored under its own id")
            let slot = Int(characteristic.slot.index)
            if slot == records.count {
                records.append(characteristic)
            } else {
                records[slot] = characteristic
            }
            slots[id] = characteristic.slot.index
        }
    }
}
