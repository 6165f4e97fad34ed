/// Accessories, bridges and services: adding what the browser found, removing, naming, rooms,
/// blocking and reachability.
extension HomeStore {
    /// Adds an accessory (with, for a bridge, every accessory behind it) to the room for the entire
    /// home. Names that collide in the home get a number ("Lamp 2"), as HomeKit does.
    /// - Returns: the accessories added, the bridge first.
    /// - Throws: 13 if it is already in a home; 1 for an id used twice; 93 for a standard service
    ///   without a required characteristic; 27 for a custom characteristic without metadata; the
    ///   naming codes for an advertised name HomeKit would refuse; 46 for text over its limit;
    ///   43–51 for a bad initial value; 49 past the home's accessory limit.
    @discardableResult
    /// - Parameter credentialHash: the digest of the credential the accessory proves itself with
    ///   afterwards (``pairAccessory(_:to:as:)`` makes one).
    public func addAccessory(
        _ description: AccessoryDescription,
        to homeID: HomeID,
        as account: AccountID,
        credentialHash: [UInt8]? = nil
    ) throws(HomeServiceError) -> [Accessory] {
        try beginMutation()
        defer { endMutation() }
        let home = try home(homeID, for: account, .addAccessory)
        try AccessoryDescriptionCheck(store: self).check(description)
        try ObjectLimits.check(
            home.accessories.count,
            adding: 1 + description.bridgedAccessories.count,
            against: limits.accessoriesPerHome,
            "the accessories of home \"\(home.name)\""
        )
        let bridgeID = insertAccessory(description, bridge: nil, in: home)
        accessories[bridgeID]!.credentialHash = credentialHash
        for bridged in description.bridgedAccessories {
            _ = insertAccessory(bridged, bridge: bridgeID, in: home)
        }
        let added = [description.id] + description.bridgedAccessories.map(\.id)
        // Observers hear of each bridged accessory, never of the bridge itself.
        for id in description.bridgedAccessories.isEmpty ? [description.id] : Array(added.dropFirst()) {
            emit(
                ChangeEvent(.accessoryAdded, object: id.raw, name: accessories[id]!.name),
                in: homeID,
                by: .account(account)
            )
        }
        return added.map { accessories[$0]! }
    }

    /// Removes an accessory; removing a bridge removes the accessories behind it.
    /// - Throws: 34 for a bridged accessory (remove its bridge instead).
    public func removeAccessory(_ id: AccessoryID, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let (accessory, home) = try lookup(id, NamedKinds.accessory, for: account, .removeAccessory)
        if let bridge = accessory.bridge {
            throw HomeServiceError(
                .cannotRemoveNonBridgeAccessory,
                "accessory \"\(accessory.name)\" is bridged; remove its bridge \"\(accessories[bridge]?.name ?? "")\" instead"
            )
        }
        deleteAccessory(id, announcingTo: home.id, by: .account(account))
    }

    /// Renames an accessory; it may take a name its own services hold.
    public func renameAccessory(_ id: AccessoryID, to name: String, as account: AccountID) throws(HomeServiceError) {
        try rename(
            id,
            NamedKinds.accessory,
            to: name,
            as: account,
            sharing: Set(accessories[id]?.services.map(\.raw) ?? [])
        )
    }

    /// Moves an accessory to a room. A bridge moves alone: its bridged accessories stay where they are.
    public func assignAccessory(_ id: AccessoryID, to roomID: RoomID, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let (accessory, home) = try lookup(id, NamedKinds.accessory, for: account, .assignAccessoryToRoom)
        _ = try sameHome(roomID, in: rooms, kind: "room", home: \.home, as: home.id, for: account)
        guard accessory.room != roomID else { return }
        accessories[id]!.room = roomID
        touch(.accessory(id))
        emit(
            ChangeEvent(.roomForAccessoryUpdated, object: id.raw, container: roomID.raw),
            in: home.id,
            by: .account(account)
        )
    }

    /// - Throws: 81 for an accessory that is not a bridge.
    public func unblockAccessory(_ id: AccessoryID, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let (accessory, home) = try lookup(id, NamedKinds.accessory, for: account, .unblockAccessory)
        guard accessory.isBridge else {
            throw HomeServiceError(
                .cannotUnblockNonBridgeAccessory,
                "accessory \"\(accessory.name)\" is not a bridge and cannot be unblocked"
            )
        }
        guard accessory.isBlocked else { return }
        accessories[id]!.isBlocked = false
        refreshCachedState(of: id, andBridged: true)
        touch(.accessory(id))
        emit(ChangeEvent(.accessoryUnblocked, object: id.raw), in: home.id, by: .account(account))
    }

    /// Checks that an identify request may be forwarded to the accessory.
    /// - Throws: 61 blocked, 4 or 88 unreachable, 48 if it cannot identify itself.
    public func identifyAccessory(_ id: AccessoryID, as account: AccountID) throws(HomeServiceError) {
        let (accessory, _) = try lookup(id, NamedKinds.accessory, for: account, .identifyAccessory)
        try checkAvailable(accessory)
        guard accessory.supportsIdentify else {
            throw HomeServiceError(.operationNotSupported, "accessory \"\(accessory.name)\" cannot identify itself")
        }
    }

    /// Fails for an accessory that cannot take requests now.
    /// - Throws: 61 if it (or its bridge) is blocked; 4 if it is unreachable, 88 if bridged.
    func checkAvailable(_ accessory: Accessory) throws(HomeServiceError) {
        try checkNotBlocked(accessory)
        if !accessory.isReachable { throw unreachableError(accessory.id) }
    }

    /// ``checkAvailable(_:)`` for an accessory of the store, read in place: copying it out of its
    /// table retained each of its references, on every write.
    func checkAvailable(_ id: AccessoryID) throws(HomeServiceError) {
        let state = availability(of: id)
        // A refusal, with its message, as the check of a whole accessory gives it.
        if state.isBlocked || !state.isReachable { try checkAvailable(accessories[id]!) }
    }

    /// Whether an accessory of the store or its bridge is blocked, and whether it is reachable,
    /// read in place (see ``checkAvailable(_:)-(AccessoryID)``). It is also what the cache slots of
    /// the accessory's characteristics hold for cached reads (``refreshCachedState(of:andBridged:)``).
    @inline(__always)
    func availability(of id: AccessoryID) -> CharacteristicCache.AccessoryState {
        let (isBlocked, bridge, isReachable) = accessories.read(id) { ($0.isBlocked, $0.bridge, $0.isReachable) }!
        return CharacteristicCache.AccessoryState(
            isBlocked: isBlocked || bridge.flatMap { accessories.read($0, \.isBlocked) } == true,
            isReachable: isReachable
        )
    }

    /// Puts the accessory's ``availability(of:)`` into the cache slots of its characteristics, and
    /// with `andBridged`, of the accessories behind it (a bridge's block is theirs too). Every
    /// change of an accessory's block or reachability calls it.
    func refreshCachedState(of id: AccessoryID, andBridged: Bool = false) {
        guard let (serviceIDs, bridged) = accessories.read(id, { ($0.services, $0.bridgedAccessories) }) else { return }
        let state = availability(of: id)
        for service in serviceIDs {
            for characteristic in services[service]?.characteristics ?? [] {
                if let slot = characteristics.read(characteristic, \.slot) { cache.setAccessoryState(state, for: slot) }
            }
        }
        if andBridged {
            for accessory in bridged { refreshCachedState(of: accessory) }
        }
    }

    /// - Throws: 61 if the accessory or its bridge is blocked (cached reads need nothing more).
    /// Inlined: as a call it made every read copy the whole `Accessory` (a third of a cached read).
    @inline(__always)
    func checkNotBlocked(_ accessory: Accessory) throws(HomeServiceError) {
        if accessory.isBlocked || accessory.bridge.flatMap({ accessories[$0]?.isBlocked }) == true {
            throw HomeServiceError(.accessoryIsBlocked, "accessory \"\(accessory.name)\" is blocked")
        }
    }

    // MARK: Services

    /// Renames a service. Its name shares the home's namespace with every other object; it may
    /// only repeat its own accessory's name.
    /// - Throws: the naming codes; 33 for an equivalent name; 31 for a name held in the home.
    public func renameService(_ id: ServiceID, to name: String, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let (service, home) = try service(id, for: account, .renameService)
        try checkRename(
            of: id.raw,
            from: service.name,
            to: name,
            kind: "service",
            in: home,
            sharing: [service.accessory.raw]
        )
        services[id]!.name = name
        reindex(from: service.name, to: name, kind: "service", id: id.raw, in: home.id)
        touch(.service(id))
        emit(
            ChangeEvent(.serviceNameUpdated, object: id.raw, container: service.accessory.raw, name: name),
            in: home.id,
            by: .account(account)
        )
    }

    /// The services of the home's accessories whose type is one of `types` (HomeKit's
    /// `servicesWithTypes`), in accessory order. Types are compared without regard to case.
    public func services(
        ofTypes types: [String],
        in id: HomeID,
        as account: AccountID
    ) throws(HomeServiceError)
        -> [Service]
    {
        let home = try home(id, for: account, .readHome)
        let wanted = Set(types.map { $0.uppercased() })
        var found: [Service] = []
        for accessoryID in home.accessories {
            for serviceID in accessories[accessoryID]!.services where wanted.contains(services[serviceID]!.type) {
                found.append(services[serviceID]!)
            }
        }
        return found
    }

    /// Sets (or with `nil` clears) what a generic service controls.
    /// - Throws: 62 unless an Outlet or Switch is associated with a type that has Power State, or a
    ///   Contact Sensor with a Door, Garage Door Opener, Window or Window Covering.
    public func updateAssociatedServiceType(
        _ id: ServiceID,
        to type: String?,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        try beginMutation()
        defer { endMutation() }
        let (service, home) = try service(id, for: account, .updateAssociatedServiceType)
        if let type { try ServiceAssociationRules.check(service: service.type, associatedType: type) }
        let normalized = type?.uppercased()
        guard service.associatedServiceType != normalized else { return }
        services[id]!.associatedServiceType = normalized
        touch(.service(id))
        emit(
            ChangeEvent(
                .associatedServiceTypeUpdated,
                object: id.raw,
                container: service.accessory.raw,
                name: normalized
            ),
            in: home.id,
            by: .account(account)
        )
    }

    // MARK: From the accessory side

    /// The accessory's connection came or went. A bridge takes its bridged accessories with it, and
    /// observers hear of the bridge as well as of each of them; an unreachable accessory's
    /// notification enablement resets.
    public func setReachable(_ id: AccessoryID, _ reachable: Bool) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        guard let bridged = accessories.read(id, \.bridgedAccessories) else {
            throw HomeServiceError(.notFound, "no such accessory \(id)")
        }
        for target in CollectionOfOne(id) + bridged {
            guard let wasReachable = accessories.read(target, \.isReachable), wasReachable != reachable else {
                continue
            }
            accessories[target]!.isReachable = reachable
            refreshCachedState(of: target)
            if !unrecordedUnreachable.isEmpty { linkedSinceStartUp.insert(target) }
            reachabilityChanged(accessories[target]!, reportedBy: id)
        }
    }

    /// Marks every accessory unreachable at start-up, before any has reconnected: in memory at once,
    /// so that every read is right from the first call. The rows and events of those that were
    /// stored reachable follow in batches (``recordStartUpUnreachability(limit:)``): recorded at
    /// once, 100,000 of them delayed the first answer by 0.12 s and held 35 MB until written.
    /// - Returns: how many accessories changed (their records are pending).
    @discardableResult
    public func markEveryAccessoryUnreachable() -> Int {
        accessories.updateEach { accessory in
            guard accessory.isReachable else { return }
            accessory.isReachable = false
            unrecordedUnreachable.append(accessory.id)
        }
        cache.markEveryAccessoryUnreachable()
        // Recorded from the end, in table order reversed: a batch's accessories are neighbours in
        // few homes, so its events and rows land together in the file (in hash order, each batch
        // touched every home, and the writer took twice as long).
        unrecordedUnreachable.reverse()
        return unrecordedUnreachable.count
    }

    /// Records up to `limit` of the accessories ``markEveryAccessoryUnreachable()`` marked: their
    /// rows and `reachabilityUpdated` events, as one mutation. One whose link attached meanwhile is
    /// left out: its own change superseded this one.
    /// - Returns: how many are still to record.
    public func recordStartUpUnreachability(limit: Int) throws(HomeServiceError) -> Int {
        try beginMutation()
        defer { endMutation() }
        for _ in 0..<min(limit, unrecordedUnreachable.count) {
            let id = unrecordedUnreachable.removeLast()
            guard !linkedSinceStartUp.contains(id), let accessory = accessories[id], !accessory.isReachable else {
                continue
            }
            reachabilityChanged(accessory, reportedBy: accessory.bridge ?? accessory.id)
        }
        if unrecordedUnreachable.isEmpty {
            // Gives the room back once done.
            unrecordedUnreachable = []
            linkedSinceStartUp = []
        }
        return unrecordedUnreachable.count
    }

    /// What follows an accessory's reachability change: its row, its notifications (an unreachable
    /// accessory's end, as in HomeKit) and the event, which names the accessory that reported it
    /// (a bridge for its bridged accessories).
    private func reachabilityChanged(_ accessory: Accessory, reportedBy reporter: AccessoryID) {
        touch(.reachability(accessory.id))
        if !accessory.isReachable && !notificationsEnabled.isEmpty {
            for service in accessory.services {
                for characteristic in services[service]!.characteristics {
                    notificationsEnabled[characteristic] = nil
                }
            }
        }
        emit(
            ChangeEvent(.reachabilityUpdated, object: accessory.id.raw, flag: accessory.isReachable),
            in: accessory.home,
            by: .accessory(reporter)
        )
    }

    /// Blocks or clears the block on an accessory (the pairing layer decides; only unblocking is a
    /// user operation).
    public func setBlocked(_ id: AccessoryID, _ blocked: Bool) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        guard let accessory = accessories[id] else { throw HomeServiceError(.notFound, "no such accessory \(id)") }
        guard accessory.isBlocked != blocked else { return }
        accessories[id]!.isBlocked = blocked
        refreshCachedState(of: id, andBridged: true)
        touch(.accessory(id))
        if !blocked { emit(ChangeEvent(.accessoryUnblocked, object: id.raw), in: accessory.home, by: .server) }
    }

    /// The accessory reports a new firmware version.
    public func updateFirmwareVersion(
        _ id: AccessoryID,
        to version: String,
        by reporter: AccessoryID
    )
        throws(HomeServiceError)
    {
        try beginMutation()
        defer { endMutation() }
        let accessory = try reportedAccessory(id, by: reporter)
        try TextRules.checkLength(version, of: "firmware version")
        guard accessory.firmwareVersion != version else { return }
        accessories[id]!.firmwareVersion = version
        touch(.accessory(id))
        emit(
            ChangeEvent(.firmwareVersionUpdated, object: id.raw, name: version),
            in: accessory.home,
            by: .accessory(reporter)
        )
    }

    /// An accessory may speak for itself and, if it is a bridge, for the accessories behind it.
    func reportedAccessory(_ id: AccessoryID, by reporter: AccessoryID) throws(HomeServiceError) -> Accessory {
        guard let accessory = accessories[id], accessory.id == reporter || accessory.bridge == reporter else {
            throw HomeServiceError(.notFound, "accessory \(reporter) has no accessory \(id)")
        }
        return accessory
    }

    // MARK: Internals

    /// Inserts one accessory of a checked description; returns its id.
    private func insertAccessory(
        _ description: AccessoryDescription,
        bridge: AccessoryID?,
        in home: Home
    ) -> AccessoryID {
        let name = freeName(for: description.name, in: home.id)
        let accessory = Accessory(
            id: description.id,
            home: home.id,
            name: name,
            room: home.roomForEntireHome,
            category: description.category,
            manufacturer: description.manufacturer,
            model: description.model,
            firmwareVersion: description.firmwareVersion,
            supportsIdentify: description.supportsIdentify,
            bridge: bridge,
            bridgedAccessories: [],
            isBlocked: false,
            isReachable: true,
            services: description.services.map(\.id),
            credentialHash: nil,
            sequence: nextSequenceNumber()
        )
        // Announced by the caller: observers hear of bridged accessories, never of their bridge.
        insert(accessory, NamedKinds.accessory, announcedBy: nil)
        if let bridge { accessories[bridge]!.bridgedAccessories.append(accessory.id) }
        // A service takes its accessory's name unless it advertises one; an advertised name that
        // another object of the home holds is numbered like an accessory's.
        let ownNames = Set([accessory.id.raw] + description.services.map(\.id.raw))
        for serviceDescription in description.services {
            let serviceName = serviceDescription.name.map { freeName(for: $0, in: home.id, sharingWith: ownNames) }
            insertService(
                serviceDescription,
                named: serviceName ?? accessory.name,
                of: accessory,
                linked: description.services
            )
        }
        return accessory.id
    }

    private func insertService(
        _ description: ServiceDescription,
        named name: String,
        of accessory: Accessory,
        linked: [ServiceDescription]
    ) {
        let time = now
        let service = Service(
            id: description.id,
            accessory: accessory.id,
            home: accessory.home,
            type: strings.intern(description.type.uppercased()),
            name: name,
            isPrimary: description.isPrimary,
            isUserInteractive: description.isUserInteractive,
            associatedServiceType: nil,
            linkedServices: description.linkedServices.map { linked[$0].id },
            characteristics: description.characteristics.map(\.id),
            sequence: nextSequenceNumber()
        )
        services[service.id] = service
        index(name, kind: "service", id: service.id.raw, in: accessory.home)
        touch(.service(service.id))
        for characteristicDescription in description.characteristics {
            let (properties, metadata) = AccessoryDescriptionCheck.resolved(characteristicDescription)!
            let (kind, isNewKind) = characteristicKinds.use(
                type: characteristicDescription.type.uppercased(),
                properties: properties,
                metadata: metadata
            )
            if isNewKind { touch(.characteristicKind(number: kind.number)) }
            let characteristic = Characteristic(
                id: characteristicDescription.id,
                service: service.id,
                accessory: accessory.id,
                home: accessory.home,
                kind: kind,
                slot: cache.allocate(
                    value: characteristicDescription.value,
                    at: characteristicDescription.value == nil ? 0 : time
                ),
                sequence: nextSequenceNumber()
            )
            characteristics[characteristic.id] = characteristic
            cache.setAccessoryState(availability(of: accessory.id), for: characteristic.slot)
            touch(.characteristic(characteristic.id))
        }
    }

    /// `name`, or the first of "name 2", "name 3"... that neither the home nor any of its objects
    /// (other than `allowed`) has a similar name to.
    private func freeName(for name: String, in home: HomeID, sharingWith allowed: Set<UniqueIdentifier> = []) -> String
    {
        var candidate = name
        var number = 2
        while names[home]?.holder(of: candidate, except: allowed) != nil
            || homes[home].map({ NameRules.areSimilar($0.name, candidate) }) == true
        {
            candidate = "\(name) \(number)"
            number += 1
        }
        return candidate
    }

    /// Deletes an accessory and those behind it, its services and characteristics, and every
    /// reference to them (service groups, actions; triggers left unable to run are disabled). With
    /// `home`, announces what observers see: each bridged accessory's removal, then the bridge's.
    func deleteAccessory(_ id: AccessoryID, announcingTo home: HomeID? = nil, by initiator: Initiator = .server) {
        guard let accessory = accessories[id] else { return }
        for bridged in accessory.bridgedAccessories {
            deleteAccessory(bridged, announcingTo: home, by: initiator)
        }
        let removedServices = Set(accessory.services)
        var removedCharacteristics: Set<CharacteristicID> = []
        for serviceID in accessory.services {
            for characteristicID in services[serviceID]!.characteristics {
                let characteristic = characteristics[characteristicID]!
                cache.release(characteristic.slot)
                if characteristicKinds.release(characteristic.kind) {
                    touch(.characteristicKind(number: characteristic.kind.number))
                }
                characteristics[characteristicID] = nil
                notificationsEnabled[characteristicID] = nil
                removedCharacteristics.insert(characteristicID)
                touch(.characteristic(characteristicID))
            }
            unindex(services[serviceID]!.name, heldBy: serviceID.raw, in: accessory.home)
            services[serviceID] = nil
            touch(.service(serviceID))
        }
        if let home {
            for groupID in homes[home]!.serviceGroups {
                for serviceID in serviceGroups[groupID]!.services where removedServices.contains(serviceID) {
                    removeFromGroup(serviceID, group: groupID, home: home, by: initiator)
                }
            }
            for actionSetID in homes[home]!.actionSets
            where actionSets[actionSetID]!.actions.contains(where: {
                removedCharacteristics.contains($0.characteristic)
            }) {
                for action in actionSets[actionSetID]!.actions
                where removedCharacteristics.contains(action.characteristic) {
                    actionOwners[action.id] = nil
                }
                actionSets[actionSetID]!.actions.removeAll { removedCharacteristics.contains($0.characteristic) }
                touch(.actionSet(actionSetID))
                emit(ChangeEvent(.actionSetActionsUpdated, object: actionSetID.raw), in: home, by: initiator)
            }
            disableTriggersThatCannotRun(in: home, by: initiator)
            emit(ChangeEvent(.accessoryRemoved, object: id.raw), in: home, by: initiator)
        }
        delete(id, NamedKinds.accessory, announcedBy: nil)
    }
}
