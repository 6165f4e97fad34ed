internal import SQLite

/// Start-up: reads every table into a new store, links objects to their parents, rebuilds the name
/// indexes and change logs, and refuses data that contradicts itself.
struct StoreLoader {
    let store: HomeStore
    let backend: any StoreBackend

    /// What the opening thread reads through: a start-up connection of its own (the characteristics
    /// get another), closed when the load ends.
    private let tables: any TableReader

    init(store: HomeStore, backend: any StoreBackend) throws(StoreError) {
        self.store = store
        self.backend = backend
        tables = try backend.makeReader()
    }

    func load() throws(StoreError) {
        // The three largest tables are decoded on other threads, each through a connection of its
        // own, in the order this one takes them over, while this one reads the small tables.
        let accessoryReader = try backend.makeReader()
        let serviceReader = try backend.makeReader()
        let characteristicReader = try backend.makeReader()
        let accessories = BackgroundWork { () throws(StoreError) in
            try Self.decodedInCreationOrder(StoreSchema.accessory, from: accessoryReader, RowCoding.accessory) {
                $0.sequence
            }
        }
        let services = BackgroundWork { () throws(StoreError) in try LoadedServices.read(from: serviceReader) }
        let characteristics = BackgroundWork { () throws(StoreError) in
            try LoadedCharacteristics.read(from: characteristicReader)
        }
        // Every one is waited for whatever happens, so that no read outlives the load.
        let others = Result { () throws(StoreError) -> Int64 in
            var maxSequence = try loadHomesAndRooms()
            // The rest needs no accessory or service: it is read while they are decoded. (No name
            // of its kinds is shared with theirs, so the namespaces' order of holders is kept.)
            try loadRest(maxSequence: &maxSequence)
            try place(try accessories.value(), maxSequence: &maxSequence)
            try place(try services.value(), maxSequence: &maxSequence)
            return maxSequence
        }
        _ = Result { () throws(StoreError) in try accessories.value() }
        _ = Result { () throws(StoreError) in try services.value() }
        let loaded = Result { () throws(StoreError) in try characteristics.value() }
        let maxSequence = try others.get()
        let loadedCharacteristics = try loaded.get()
        try adopt(loadedCharacteristics)
        store.nextSequence = max(maxSequence, loadedCharacteristics.maxSequence) + 1
    }

    /// Accounts, tokens, homes, rooms and zones. Returns the highest creation sequence number
    /// among them.
    private func loadHomesAndRooms() throws(StoreError) -> Int64 {
        var maxSequence: Int64 = 0
        func note(_ sequence: Int64) { maxSequence = max(maxSequence, sequence) }

        try tables.forEachRow(of: StoreSchema.account) { (row) throws(StoreError) in
            let account = try RowCoding.account(row)
            store.accounts[account.id] = account
            note(account.sequence)
        }
        try tables.forEachRow(of: StoreSchema.token) { (row) throws(StoreError) in
            let token = try RowCoding.token(row)
            try require(store.accounts[token.account] != nil, "token \(token.id) belongs to no account")
            store.tokens.add(token)
            note(token.sequence)
        }
        try tables.forEachRow(of: StoreSchema.home) { (row) throws(StoreError) in
            let home = try RowCoding.home(row)
            store.homes[home.id] = home
            store.names[home.id] = HomeNamespace()
            note(home.sequence)
        }
        try tables.forEachRow(of: StoreSchema.member) { (row) throws(StoreError) in
            let (homeID, accountID, role) = try RowCoding.member(row)
            try require(store.accounts[accountID] != nil, "home \(homeID) lists unknown account \(accountID)")
            try requireHome(homeID, "member \(accountID)")
            store.homes[homeID]!.members[accountID] = role
            store.homeIDsByMember[accountID, default: []].insert(homeID)
        }
        try tables.forEachRow(of: StoreSchema.room) { (row) throws(StoreError) in
            let room = try RowCoding.room(row)
            store.rooms[room.id] = room
            try requireHome(room.home, "room \(room.id)")
            if room.id != store.homes[room.home]!.roomForEntireHome { store.homes[room.home]!.rooms.append(room.id) }
            store.index(room.name, kind: "room", id: room.id.raw, in: room.home)
            note(room.sequence)
        }
        for home in store.homes.values {
            try require(store.rooms[home.roomForEntireHome] != nil, "home \(home.id) has no room for the entire home")
        }
        try tables.forEachRow(of: StoreSchema.zone) { (row) throws(StoreError) in
            let zone = try RowCoding.zone(row)
            for room in zone.rooms {
                try require(store.rooms[room]?.home == zone.home, "zone \(zone.id) lists room \(room)")
            }
            try requireHome(zone.home, "zone \(zone.id)")
            store.place(zone, NamedKinds.zone)
            note(zone.sequence)
        }
        return maxSequence
    }

    /// Places the accessories, in creation order, and links each bridged one to its bridge.
    private func place(_ accessories: [Accessory], maxSequence: inout Int64) throws(StoreError) {
        for accessory in accessories {
            try require(
                store.rooms.read(accessory.room, { $0.home }) == accessory.home,
                "accessory \(accessory.id) is in no room"
            )
            try requireHome(accessory.home, "accessory \(accessory.id)")
            maxSequence = max(maxSequence, accessory.sequence)
        }
        store.placeLoaded(accessories, NamedKinds.accessory)
        // Bridged accessories are linked in the order they were added.
        for accessory in accessories {
            guard let bridge = accessory.bridge else { continue }
            try require(
                store.accessories.update(bridge, { $0.bridgedAccessories.append(accessory.id) }) != nil,
                "accessory \(accessory.id) has a missing bridge"
            )
        }
    }

    /// Places the services, each listed by its accessory in creation order.
    private func place(_ loaded: LoadedServices, maxSequence: inout Int64) throws(StoreError) {
        store.strings = loaded.strings
        store.services.reserveCapacity(loaded.services.count)
        for service in loaded.services {
            try require(
                store.accessories.update(service.accessory, { $0.services.append(service.id) }) != nil,
                "service \(service.id) has no accessory"
            )
            store.services.insert(service, for: service.id)
            store.index(service.name, kind: "service", id: service.id.raw, in: service.home)
            maxSequence = max(maxSequence, service.sequence)
        }
    }

    /// Takes over the characteristics read on the other thread, each listed by its service.
    private func adopt(_ loaded: LoadedCharacteristics) throws(StoreError) {
        store.characteristics = loaded.table
        store.cache = loaded.cache
        store.characteristicKinds = loaded.kinds
        for (service, characteristics) in loaded.byService {
            try require(
                store.services.update(service, { $0.characteristics = characteristics }) != nil,
                "characteristic \(characteristics[0]) has no service"
            )
        }
        // Each characteristic's slot learns its accessory's state (blocked, reachable): the states
        // first, then one pass over the characteristics.
        var states: [AccessoryID: CharacteristicCache.AccessoryState] = [:]
        states.reserveCapacity(store.accessories.count)
        for accessory in store.accessories.values { states[accessory.id] = store.availability(of: accessory.id) }
        for characteristic in store.characteristics.values {
            if let state = states[characteristic.accessory] {
                store.cache.setAccessoryState(state, for: characteristic.slot)
            }
        }
    }

    /// Service groups, action sets, triggers, events and idempotency keys (none of them needs an
    /// accessory, service or characteristic).
    private func loadRest(maxSequence: inout Int64) throws(StoreError) {
        func note(_ sequence: Int64) { maxSequence = max(maxSequence, sequence) }
        try tables.forEachRow(of: StoreSchema.serviceGroup) { (row) throws(StoreError) in
            let group = try RowCoding.serviceGroup(row)
            try requireHome(group.home, "service group \(group.id)")
            store.place(group, NamedKinds.serviceGroup)
            note(group.sequence)
        }
        try tables.forEachRow(of: StoreSchema.actionSet) { (row) throws(StoreError) in
            let actionSet = try RowCoding.actionSet(row)
            try requireHome(actionSet.home, "action set \(actionSet.id)")
            for action in actionSet.actions { store.actionOwners[action.id] = actionSet.id }
            store.place(actionSet, NamedKinds.actionSet)
            note(actionSet.sequence)
        }
        try tables.forEachRow(of: StoreSchema.timerTrigger) { (row) throws(StoreError) in
            let trigger = try RowCoding.timerTrigger(row)
            try requireHome(trigger.home, "trigger \(trigger.id)")
            store.place(trigger, NamedKinds.trigger)
            note(trigger.sequence)
        }
        try loadEvents()
        try tables.forEachRow(of: StoreSchema.idempotencyBatch) { (row) throws(StoreError) in
            let (number, account, records) = try RowCoding.idempotencyBatch(row)
            try require(store.accounts[account] != nil, "idempotency records of unknown account \(account)")
            store.idempotency.load(row: number, account: account, records: records)
        }
        // Rows whose every record was used again later hold nothing: deleted with the first commit.
        for row in store.idempotency.finishLoading() { store.touch(.idempotencyBatch(row)) }
    }

    /// Rebuilds each home's log from its retained events, which must run without gaps up to the
    /// home's revision.
    private func loadEvents() throws(StoreError) {
        var changesByHome: [HomeID: [HomeChange]] = [:]
        try tables.forEachRow(of: StoreSchema.eventBatch) { (row) throws(StoreError) in
            let changes = try RowCoding.changes(inBatch: row)
            changesByHome[changes[0].home, default: []].append(contentsOf: changes)
        }
        for (homeID, home) in store.homes {
            let changes = changesByHome.removeValue(forKey: homeID) ?? []
            let first = changes.first?.revision ?? home.revision + 1
            var log = store.newLog(after: first - 1)
            for change in changes {
                try require(
                    change.revision == log.currentRevision + 1,
                    "home \(homeID) misses event \(log.currentRevision + 1)"
                )
                log.append(change, at: UInt64(max(0, change.time)))
            }
            // The latest event is always kept, so it tells the revision; the row's may be older.
            try require(
                log.currentRevision >= home.revision,
                "home \(homeID) is at revision \(home.revision) but its events end at \(log.currentRevision)"
            )
            store.homes[homeID]!.revision = log.currentRevision
            store.trimmedThrough[homeID] = first - 1
            store.logs[homeID] = log
        }
        if let orphan = changesByHome.keys.first {
            throw .corrupt("events of home \(orphan), which does not exist")
        }
    }

    /// Every row of a large table, decoded, in creation order. These tables are read in key order
    /// and sorted here: ORDER BY sequence (which has no index) made SQLite sort the whole table in a
    /// temporary B-tree first.
    static func decodedInCreationOrder<Object>(
        _ table: StoreTable,
        from reader: any TableReader,
        _ decode: (any StoredRow) throws(StoreError) -> Object,
        sequence: (Object) -> Int64
    ) throws(StoreError) -> [Object] {
        var objects: [Object] = []
        objects.reserveCapacity(try reader.rowCount(of: table))
        try reader.forEachRow(of: table) { (row) throws(StoreError) in objects.append(try decode(row)) }
        // A closure, not a key path: applying a key path cost about 1,000 instructions an object.
        let sequences = objects.map(sequence)
        return objects.indices.sorted { sequences[$0] < sequences[$1] }.map { objects[$0] }
    }

    /// Checks that the home an object names as its parent exists.
    private func requireHome(_ id: HomeID, _ what: @autoclosure () -> String) throws(StoreError) {
        try require(store.homes[id] != nil, "\(what()) belongs to home \(id), which does not exist")
    }

    private func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(StoreError) {
        if !condition { throw .corrupt(message()) }
    }
}
