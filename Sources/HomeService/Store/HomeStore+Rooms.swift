/// Rooms and zones.
extension HomeStore {
    public func addRoom(named name: String, to homeID: HomeID, as account: AccountID) throws(HomeServiceError) -> Room {
        try checkAcceptingChanges()
        let home = try home(homeID, for: account, .addRoom)
        try checkNewName(name, kind: "room", in: home)
        let room = Room(id: .random(), home: homeID, name: name, sequence: nextSequenceNumber())
        rooms[room.id] = room
        homes[homeID]!.rooms.append(room.id)
        index(name, kind: "room", id: room.id.raw, in: homeID)
        touch(.room(room.id))
        emit(ChangeEvent(.roomAdded, object: room.id.raw, name: name), in: homeID, by: .account(account))
        submitPending()
        return room
    }

    /// Removes a room: its accessories move to the room for the entire home, and it leaves every zone.
    /// - Throws: 29 for the room for the entire home.
    public func removeRoom(_ id: RoomID, as account: AccountID) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let (room, home) = try room(id, for: account, .removeRoom)
        try checkNotRoomForEntireHome(room, home, "removed")
        let initiator = Initiator.account(account)
        for accessoryID in home.accessories where accessories[accessoryID]?.room == id {
            accessories[accessoryID]!.room = home.roomForEntireHome
            touch(.accessory(accessoryID))
            emit(
                ChangeEvent(.roomForAccessoryUpdated, object: accessoryID.raw, container: home.roomForEntireHome.raw),
                in: home.id,
                by: initiator
            )
        }
        for zoneID in home.zones where zones[zoneID]!.rooms.contains(id) {
            zones[zoneID]!.rooms.removeAll { $0 == id }
            touch(.zone(zoneID))
            emit(ChangeEvent(.roomRemovedFromZone, object: id.raw, container: zoneID.raw), in: home.id, by: initiator)
        }
        rooms[id] = nil
        homes[home.id]!.rooms.removeAll { $0 == id }
        unindex(room.name, in: home.id)
        touch(.room(id))
        emit(ChangeEvent(.roomRemoved, object: id.raw), in: home.id, by: initiator)
        submitPending()
    }

    /// - Throws: 29 for the room for the entire home; 33, 31 and the naming codes.
    public func renameRoom(_ id: RoomID, to name: String, as account: AccountID) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let (room, home) = try room(id, for: account, .renameRoom)
        try checkNotRoomForEntireHome(room, home, "renamed")
        try checkRename(of: id.raw, from: room.name, to: name, kind: "room", in: home)
        rooms[id]!.name = name
        reindex(from: room.name, to: name, kind: "room", id: id.raw, in: home.id)
        touch(.room(id))
        emit(ChangeEvent(.roomNameUpdated, object: id.raw, name: name), in: home.id, by: .account(account))
        submitPending()
    }

    private func checkNotRoomForEntireHome(_ room: Room, _ home: Home, _ what: String) throws(HomeServiceError) {
        if room.id == home.roomForEntireHome {
            throw HomeServiceError(
                .roomForHomeCannotBeUpdated,
                "the room for the entire home \"\(home.name)\" cannot be \(what)"
            )
        }
    }

    // MARK: Zones

    public func addZone(named name: String, to homeID: HomeID, as account: AccountID) throws(HomeServiceError) -> Zone {
        try checkAcceptingChanges()
        let home = try home(homeID, for: account, .addZone)
        try checkNewName(name, kind: "zone", in: home)
        let zone = Zone(id: .random(), home: homeID, name: name, rooms: [], sequence: nextSequenceNumber())
        zones[zone.id] = zone
        homes[homeID]!.zones.append(zone.id)
        index(name, kind: "zone", id: zone.id.raw, in: homeID)
        touch(.zone(zone.id))
        emit(ChangeEvent(.zoneAdded, object: zone.id.raw, name: name), in: homeID, by: .account(account))
        submitPending()
        return zone
    }

    public func removeZone(_ id: ZoneID, as account: AccountID) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let (zone, home) = try zone(id, for: account, .removeZone)
        zones[id] = nil
        homes[home.id]!.zones.removeAll { $0 == id }
        unindex(zone.name, in: home.id)
        touch(.zone(id))
        emit(ChangeEvent(.zoneRemoved, object: id.raw), in: home.id, by: .account(account))
        submitPending()
    }

    public func renameZone(_ id: ZoneID, to name: String, as account: AccountID) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let (zone, home) = try zone(id, for: account, .renameZone)
        try checkRename(of: id.raw, from: zone.name, to: name, kind: "zone", in: home)
        zones[id]!.name = name
        reindex(from: zone.name, to: name, kind: "zone", id: id.raw, in: home.id)
        touch(.zone(id))
        emit(ChangeEvent(.zoneNameUpdated, object: id.raw, name: name), in: home.id, by: .account(account))
        submitPending()
    }

    /// - Throws: 24 for the room for the entire home; 1 if the room is already in the zone.
    public func addRoom(_ roomID: RoomID, toZone id: ZoneID, as account: AccountID) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let (zone, home) = try zone(id, for: account, .addRoomToZone)
        let room = try sameHome(roomID, in: rooms, kind: "room", home: \.home, as: home)
        guard roomID != home.roomForEntireHome else {
            throw HomeServiceError(
                .roomForHomeCannotBeInZone,
                "the room for the entire home cannot be in zone \"\(zone.name)\""
            )
        }
        guard !zone.rooms.contains(roomID) else {
            throw HomeServiceError(.alreadyExists, "room \"\(room.name)\" is already in zone \"\(zone.name)\"")
        }
        zones[id]!.rooms.append(roomID)
        touch(.zone(id))
        emit(ChangeEvent(.roomAddedToZone, object: roomID.raw, container: id.raw), in: home.id, by: .account(account))
        submitPending()
    }

    /// - Throws: 2 if the room is not in the zone.
    public func removeRoom(_ roomID: RoomID, fromZone id: ZoneID, as account: AccountID) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let (zone, home) = try zone(id, for: account, .removeRoomFromZone)
        guard zone.rooms.contains(roomID) else {
            throw HomeServiceError(.notFound, "room \(roomID) is not in zone \"\(zone.name)\"")
        }
        zones[id]!.rooms.removeAll { $0 == roomID }
        touch(.zone(id))
        emit(
            ChangeEvent(.roomRemovedFromZone, object: roomID.raw, container: id.raw),
            in: home.id,
            by: .account(account)
        )
        submitPending()
    }
}
