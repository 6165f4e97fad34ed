internal import SQLite

/// Start-up: reads every table into a new store, links objects to their parents, rebuilds the name
/// indexes and change logs, and refuses data that contradicts itself.
struct StoreLoader {
    let store: HomeStore
    let backend: any StoreBackend

    func load() throws(StoreError) {
        var maxSequence: Int64 = 0
        func note(_ sequence: Int64) { maxSequence = max(maxSequence, sequence) }

        for row in try backend.rows(of: StoreSchema.account) {
            let account = try RowCoding.account(row)
            store.accounts[account.id] = account
            note(account.sequence)
        }
        for row in try backend.rows(of: StoreSchema.token) {
            let token = try RowCoding.token(row)
            try require(store.accounts[token.account] != nil, "token \(token.id) belongs to no account")
            store.tokens[token.id] = token
            store.tokenIDsByHash[token.hash] = token.id
            note(token.sequence)
        }
        for row in try backend.rows(of: StoreSchema.home) {
            let home = try RowCoding.home(row)
            store.homes[home.id] = home
            store.names[home.id] = [:]
            note(home.sequence)
        }
        for row in try backend.rows(of: StoreSchema.member) {
            let (homeID, accountID, role) = try RowCoding.member(row)
            try require(store.accounts[accountID] != nil, "home \(homeID) lists unknown account \(accountID)")
            try requireHome(homeID, "member \(accountID)")
            store.homes[homeID]!.members[accountID] = role
        }
        for home in store.homes.values {
            store.index(home.name, kind: "home", id: home.id.raw, in: home.id)
        }
        for row in try backend.rows(of: StoreSchema.room) {
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
        for row in try backend.rows(of: StoreSchema.zone) {
            let zone = try RowCoding.zone(row)
            for room in zone.rooms {
                try require(store.rooms[room]?.home == zone.home, "zone \(zone.id) lists room \(room)")
            }
            store.zones[zone.id] = zone
            try requireHome(zone.home, "zone \(zone.id)")
            store.homes[zone.home]!.zones.append(zone.id)
            store.index(zone.name, kind: "zone", id: zone.id.raw, in: zone.home)
            note(zone.sequence)
        }
        var accessoriesInOrder: [AccessoryID] = []
        for row in try backend.rows(of: StoreSchema.accessory) {
            let accessory = try RowCoding.accessory(row)
            accessoriesInOrder.append(accessory.id)
            try require(store.rooms[accessory.room]?.home == accessory.home, "accessory \(accessory.id) is in no room")
            store.accessories[accessory.id] = accessory
            try requireHome(accessory.home, "accessory \(accessory.id)")
            store.homes[accessory.home]!.accessories.append(accessory.id)
            store.index(accessory.name, kind: "accessory", id: accessory.id.raw, in: accessory.home)
            note(accessory.sequence)
        }
        // Rows come in creation order, so bridged accessories are linked in the order they were added.
        for id in accessoriesInOrder {
            guard let bridge = store.accessories[id]!.bridge else { continue }
            try require(store.accessories[bridge] != nil, "accessory \(id) has a missing bridge")
            store.accessories[bridge]!.bridgedAccessories.append(id)
        }
        for row in try backend.rows(of: StoreSchema.service) {
            let service = try RowCoding.service(row)
            try require(store.accessories[service.accessory] != nil, "service \(service.id) has no accessory")
            store.services[service.id] = service
            store.accessories[service.accessory]!.services.append(service.id)
            note(service.sequence)
        }
        for row in try backend.rows(of: StoreSchema.characteristic) {
            let characteristic = try RowCoding.characteristic(row) { entry in
                store.cache.allocate(value: entry.value, at: entry.updatedAt)
            }
            try require(
                store.services[characteristic.service] != nil,
                "characteristic \(characteristic.id) has no service"
            )
            store.characteristics[characteristic.id] = characteristic
            store.services[characteristic.service]!.characteristics.append(characteristic.id)
            note(characteristic.sequence)
        }
        for row in try backend.rows(of: StoreSchema.serviceGroup) {
            let group = try RowCoding.serviceGroup(row)
            store.serviceGroups[group.id] = group
            try requireHome(group.home, "service group \(group.id)")
            store.homes[group.home]!.serviceGroups.append(group.id)
            store.index(group.name, kind: "service group", id: group.id.raw, in: group.home)
            note(group.sequence)
        }
        for row in try backend.rows(of: StoreSchema.actionSet) {
            let actionSet = try RowCoding.actionSet(row)
            store.actionSets[actionSet.id] = actionSet
            for action in actionSet.actions { store.actionOwners[action.id] = actionSet.id }
            try requireHome(actionSet.home, "action set \(actionSet.id)")
            store.homes[actionSet.home]!.actionSets.append(actionSet.id)
            store.index(actionSet.name, kind: "action set", id: actionSet.id.raw, in: actionSet.home)
            note(actionSet.sequence)
        }
        for row in try backend.rows(of: StoreSchema.timerTrigger) {
            let trigger = try RowCoding.timerTrigger(row)
            store.triggers[trigger.id] = trigger
            try requireHome(trigger.home, "trigger \(trigger.id)")
            store.homes[trigger.home]!.triggers.append(trigger.id)
            store.index(trigger.name, kind: "trigger", id: trigger.id.raw, in: trigger.home)
            note(trigger.sequence)
        }
        try loadEvents()
        store.nextSequence = maxSequence + 1
    }

    /// Rebuilds each home's log from its retained events, which must run without gaps up to the
    /// home's revision.
    private func loadEvents() throws(StoreError) {
        var changesByHome: [HomeID: [HomeChange]] = [:]
        for row in try backend.rows(of: StoreSchema.event) {
            let change = try RowCoding.change(row)
            changesByHome[change.home, default: []].append(change)
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
            try require(
                log.currentRevision == home.revision,
                "home \(homeID) is at revision \(home.revision) but its events end at \(log.currentRevision)"
            )
            store.logs[homeID] = log
        }
        if let orphan = changesByHome.keys.first {
            throw .corrupt("events of home \(orphan), which does not exist")
        }
    }

    /// Checks that the home an object names as its parent exists.
    private func requireHome(_ id: HomeID, _ what: @autoclosure () -> String) throws(StoreError) {
        try require(store.homes[id] != nil, "\(what()) belongs to home \(id), which does not exist")
    }

    private func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(StoreError) {
        if !condition { throw .corrupt(message()) }
    }
}
