/// Rooms and zones.
extension HomeStore {
    public func addRoom(named name: String, to homeID: HomeID, as account: AccountID) throws(HomeServiceError) -> Room {
        try beginMutation()
        defer { endMutation() }
        _ = try homeForAdding(name, NamedKinds.room, to: homeID, as: account)
        let room = Room(id: .random(), home: homeID, name: name, sequence: nextSequenceNumber())
        insert(room, NamedKinds.room, announcedBy: account)
        return room
    }

    /// Removes a room: its accessories move to the room for the entire home, and it leaves every zone.
    /// - Throws: 29 for the room for the entire home.
    public func removeRoom(_ id: RoomID, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let (room, home) = try lookup(id, NamedKinds.room, for: account, .removeRoom)
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
        delete(id, NamedKinds.room, announcedBy: initiator)
    }

    /// - Throws: 29 for the room for the entire home; 33, 31 and the naming codes.
    public func renameRoom(_ id: RoomID, to name: String, as account: AccountID) throws(HomeServiceError) {
        try rename(id, NamedKinds.room, to: name, as: account) { room, home throws(HomeServiceError) in
            try checkNotRoomForEntireHome(room, home, "renamed")
        }
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
        try beginMutation()
        defer { endMutation() }
        _ = try homeForAdding(name, NamedKinds.zone, to: homeID, as: account)
        let zone = Zone(id: .random(), home: homeID, name: name, rooms: [], sequence: nextSequenceNumber())
        insert(zone, NamedKinds.zone, announcedBy: account)
        return zone
    }

    public func removeZone(_ id: ZoneID, as account: AccountID) throws(HomeServiceError) {
        try remove(id, NamedKinds.zone, as: account)
    }

    public func renameZone(_ id: ZoneID, to name: String, as account: AccountID) throws(HomeServiceError) {
        try rename(id, NamedKinds.zone, to: name, as: account)
    }

    /// - Throws: 24 for the room for the entire home; 1 if the room is already in the zone.
    public func addRoom(_ roomID: RoomID, toZone id: ZoneID, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let (zone, home) = try lookup(id, NamedKinds.zone, for: account, .addRoomToZone)
        let room = try sameHome(roomID, in: rooms, kind: "room", home: \.home, as: home.id, for: account)
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
    }

    /// - Throws: 2 if the room is not in the zone.
    public func removeRoom(_ roomID: RoomID, fromZone id: ZoneID, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let (zone, home) = try lookup(id, NamedKinds.zone, for: account, .removeRoomFromZone)
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
    }
}
