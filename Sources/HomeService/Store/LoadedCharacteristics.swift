/// Every stored characteristic, decoded on a thread of its own while ``StoreLoader`` reads the other
/// tables: at 100,000 accessories they are 500,000 of the 900,000 rows, and half of the load's time.
///
/// It needs nothing from the other tables; the loader links each characteristic to its service
/// afterwards.
struct LoadedCharacteristics: Sendable {
    var table = IDTable<IDKind.Characteristic, Characteristic>()
    var cache = CharacteristicCache()
    /// Every stored kind, counted by the characteristics that use it.
    var kinds = CharacteristicKinds()
    /// Each service's characteristics, in creation order (the order it lists them).
    var byService: [(service: ServiceID, characteristics: [CharacteristicID])] = []
    /// The highest creation sequence number among them (0 when there are none).
    var maxSequence: Int64 = 0

    /// Reads the characteristic table through `reader`.
    static func read(from reader: any TableReader) throws(StoreError) -> LoadedCharacteristics {
        var loaded = LoadedCharacteristics()
        try reader.forEachRow(of: StoreSchema.characteristicKind) { (row) throws(StoreError) in
            let kind = try RowCoding.characteristicKind(row)
            guard loaded.kinds.restore(kind) else {
                throw .corrupt("characteristic kind \(kind.number) repeats another")
            }
        }
        // Growing the table row by row rehashed it at every doubling: counting first is cheaper.
        let count = try reader.rowCount(of: StoreSchema.characteristic)
        loaded.table.reserveCapacity(count)
        loaded.cache.reserveCapacity(count)
        var sequenced: [(sequence: Int64, id: CharacteristicID, service: ServiceID)] = []
        sequenced.reserveCapacity(count)
        // Rows come in id order (StoreSchema.characteristic); sorting here is cheaper than SQLite's
        // ORDER BY, which has no index to follow.
        try reader.forEachRow(of: StoreSchema.characteristic) { (row) throws(StoreError) in
            let characteristic = try RowCoding.characteristic(row, kinds: &loaded.kinds) { entry in
                loaded.cache.allocate(value: entry.value, at: entry.updatedAt)
            }
            loaded.table[characteristic.id] = characteristic
            sequenced.append((characteristic.sequence, characteristic.id, characteristic.service))
            loaded.maxSequence = max(loaded.maxSequence, characteristic.sequence)
        }
        sequenced.sort { ($0.service, $0.sequence) < ($1.service, $1.sequence) }
        var start = sequenced.startIndex
        while start < sequenced.endIndex {
            let service = sequenced[start].service
            var end = start + 1
            while end < sequenced.endIndex && sequenced[end].service == service { end += 1 }
            loaded.byService.append((service, sequenced[start..<end].map(\.id)))
            start = end
        }
        return loaded
    }
}
