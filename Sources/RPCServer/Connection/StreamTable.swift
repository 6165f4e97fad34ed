import Wire

/// A map from stream id to `Value` for the per-call tables on the hot path.
///
/// Every call inserts, looks up and removes its stream id a few times; with `Dictionary` each of those
/// hashed with SipHash, about 8% of a pipelined call in perf. Stream ids are small increasing integers
/// chosen by the peer, so this table uses open addressing with linear probing and a multiplicative
/// (Fibonacci) hash. Deletion shifts later entries back instead of leaving tombstones, so probe chains
/// never grow with churn. Stream id 0 (the connection) marks an empty slot and cannot be stored.
///
/// A hostile peer cannot make chains long: ids must increase, and the table holds at most the
/// connection's concurrent-stream limit.
struct StreamTable<Value> {
    /// A slot: key 0 marks it empty. Keys and values share one array so that a change checks one
    /// buffer's uniqueness, not two.
    fileprivate struct Entry {
        var key: UInt32
        var value: Value?
    }

    private var entries: [Entry]
    private(set) var count = 0
    /// log2 of the capacity.
    private var shift: UInt32

    init() {
        shift = 4
        entries = Array(repeating: Entry(key: 0, value: nil), count: 1 << 4)
    }

    var isEmpty: Bool { count == 0 }
    private var mask: Int { entries.count - 1 }

    private func home(of key: UInt32) -> Int {
        Int((key &* 0x9E37_79B1) >> (32 - shift))
    }

    /// The slot holding `key`, if any.
    private func slot(of key: UInt32) -> Int? {
        var index = home(of: key)
        while true {
            let found = entries[index].key
            if found == key { return index }
            if found == 0 { return nil }
            index = (index + 1) & mask
        }
    }

    subscript(id: StreamID) -> Value? {
        guard let index = slot(of: id.rawValue) else { return nil }
        return entries[index].value
    }

    func contains(_ id: StreamID) -> Bool {
        slot(of: id.rawValue) != nil
    }

    /// Stores `value` for `id`, replacing any value it had.
    mutating func insert(_ value: consuming Value, for id: StreamID) {
        precondition(id != .connection, "stream 0 cannot be stored")
        if (count + 1) * 2 > entries.count { grow() }
        var index = home(of: id.rawValue)
        while entries[index].key != 0 && entries[index].key != id.rawValue {
            index = (index + 1) & mask
        }
        if entries[index].key == 0 { count += 1 }
        entries[index] = Entry(key: id.rawValue, value: value)
    }

    /// Removes `id` and returns its value, if it was present.
    @discardableResult
    mutating func removeValue(for id: StreamID) -> Value? {
        guard var hole = slot(of: id.rawValue) else { return nil }
        // Moved out, not copied: a copy would retain a class value, and clearing the slot release it.
        let removed = entries[hole].value.take()
        count -= 1
        // Backward-shift: move later entries of the chain into the hole when their home allows it.
        var next = hole
        while true {
            next = (next + 1) & mask
            let key = entries[next].key
            if key == 0 { break }
            let ideal = home(of: key)
            // The entry at `next` may move to `hole` unless its home lies cyclically in (hole, next].
            let staysPut = hole <= next ? (hole < ideal && ideal <= next) : (hole < ideal || ideal <= next)
            if staysPut { continue }
            entries.swapAt(hole, next)
            hole = next
        }
        entries[hole] = Entry(key: 0, value: nil)
        return removed
    }

    /// Every stored value, in no particular order.
    var allValues: [Value] {
        entries.compactMap(\.value)
    }

    /// Every stored stream id, in no particular order.
    var allIDs: [StreamID] {
        entries.filter { $0.key != 0 }.map { StreamID($0.key) }
    }

    private mutating func grow() {
        let old = entries
        shift += 1
        entries = Array(repeating: Entry(key: 0, value: nil), count: 1 << shift)
        count = 0
        for entry in old where entry.key != 0 {
            insert(entry.value!, for: StreamID(entry.key))
        }
    }
}

extension StreamTable: Sendable where Value: Sendable {}
extension StreamTable.Entry: Sendable where Value: Sendable {}
