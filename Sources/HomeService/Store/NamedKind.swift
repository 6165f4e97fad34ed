/// How the store keeps one kind of named home object (rooms, zones, accessories, service groups,
/// action sets, triggers): how its home lists it, its row, and the events and operations that
/// belong to it (its table and name are ``NamedHomeObject``'s). Adding, renaming and removing are
/// written once, over these.
struct NamedKind<Kind, Object: NamedHomeObject>: Sendable where Object.Tag == Kind {
    /// "room", "zone"... for messages and the namespace.
    let noun: String
    let homeList: any WritableKeyPath<Home, [ID<Kind>]> & Sendable
    let record: @Sendable (ID<Kind>) -> RecordKey
    let added: ChangeKind
    let removed: ChangeKind
    let renamed: ChangeKind
    let addOperation: HomeOperation
    let removeOperation: HomeOperation
    let renameOperation: HomeOperation
    /// How many a home may hold.
    let limit: any KeyPath<ObjectLimits, Int> & Sendable
}

/// What ``NamedKind`` reads and renames in each named home object, and the store's table of them.
/// A protocol rather than key paths: the generic code over it is specialised, so these are plain
/// field accesses, where applying a key path cost about 600 instructions (start-up places 100,000
/// accessories) and 800 on every lookup of a changed object.
protocol NamedHomeObject {
    /// The `IDKind` its id carries.
    associatedtype Tag
    var id: ID<Tag> { get }
    var home: HomeID { get }
    var name: String { get set }
    /// Gives `body` the store's table of this kind, in place.
    static func withTable<Result>(in store: HomeStore, _ body: (inout IDTable<Tag, Self>) -> Result) -> Result
}

extension NamedHomeObject {
    /// The store's table of this kind.
    static func table(in store: HomeStore) -> IDTable<Tag, Self> { withTable(in: store) { $0 } }
}

extension Room: NamedHomeObject {
    static func withTable<R>(in store: HomeStore, _ body: (inout IDTable<IDKind.Room, Room>) -> R) -> R {
        body(&store.rooms)
    }
}

extension Zone: NamedHomeObject {
    static func withTable<R>(in store: HomeStore, _ body: (inout IDTable<IDKind.Zone, Zone>) -> R) -> R {
        body(&store.zones)
    }
}

extension Accessory: NamedHomeObject {
    static func withTable<R>(in store: HomeStore, _ body: (inout IDTable<IDKind.Accessory, Accessory>) -> R) -> R {
        body(&store.accessories)
    }
}

extension ServiceGroup: NamedHomeObject {
    static func withTable<R>(in store: HomeStore, _ body: (inout IDTable<IDKind.ServiceGroup, ServiceGroup>) -> R) -> R
    {
        body(&store.serviceGroups)
    }
}

extension ActionSet: NamedHomeObject {
    static func withTable<R>(in store: HomeStore, _ body: (inout IDTable<IDKind.ActionSet, ActionSet>) -> R) -> R {
        body(&store.actionSets)
    }
}

extension TimerTrigger: NamedHomeObject {
    static func withTable<R>(in store: HomeStore, _ body: (inout IDTable<IDKind.Trigger, TimerTrigger>) -> R) -> R {
        body(&store.triggers)
    }
}

/// The named kinds.
enum NamedKinds {
    static let room: NamedKind<IDKind.Room, Room> = NamedKind(
        noun: "room",
        homeList: \.rooms,
        record: RecordKey.room,
        added: .roomAdded,
        removed: .roomRemoved,
        renamed: .roomNameUpdated,
        addOperation: .addRoom,
        removeOperation: .removeRoom,
        renameOperation: .renameRoom,
        limit: \.roomsPerHome
    )

    static let zone: NamedKind<IDKind.Zone, Zone> = NamedKind(
        noun: "zone",
        homeList: \.zones,
        record: RecordKey.zone,
        added: .zoneAdded,
        removed: .zoneRemoved,
        renamed: .zoneNameUpdated,
        addOperation: .addZone,
        removeOperation: .removeZone,
        renameOperation: .renameZone,
        limit: \.zonesPerHome
    )

    static let accessory: NamedKind<IDKind.Accessory, Accessory> = NamedKind(
        noun: "accessory",
        homeList: \.accessories,
        record: RecordKey.accessory,
        added: .accessoryAdded,
        removed: .accessoryRemoved,
        renamed: .accessoryNameUpdated,
        addOperation: .addAccessory,
        removeOperation: .removeAccessory,
        renameOperation: .renameAccessory,
        limit: \.accessoriesPerHome
    )

    static let serviceGroup: NamedKind<IDKind.ServiceGroup, ServiceGroup> = NamedKind(
        noun: "service group",
        homeList: \.serviceGroups,
        record: RecordKey.serviceGroup,
        added: .serviceGroupAdded,
        removed: .serviceGroupRemoved,
        renamed: .serviceGroupNameUpdated,
        addOperation: .addServiceGroup,
        removeOperation: .removeServiceGroup,
        renameOperation: .renameServiceGroup,
        limit: \.serviceGroupsPerHome
    )

    static let actionSet: NamedKind<IDKind.ActionSet, ActionSet> = NamedKind(
        noun: "action set",
        homeList: \.actionSets,
        record: RecordKey.actionSet,
        added: .actionSetAdded,
        removed: .actionSetRemoved,
        renamed: .actionSetNameUpdated,
        addOperation: .addActionSet,
        removeOperation: .removeActionSet,
        renameOperation: .renameActionSet,
        limit: \.actionSetsPerHome
    )

    static let trigger: NamedKind<IDKind.Trigger, TimerTrigger> = NamedKind(
        noun: "trigger",
        homeList: \.triggers,
        record: RecordKey.trigger,
        added: .triggerAdded,
        removed: .triggerRemoved,
        renamed: .triggerNameUpdated,
        addOperation: .addTrigger,
        removeOperation: .removeTrigger,
        renameOperation: .renameTrigger,
        limit: \.triggersPerHome
    )
}

extension HomeStore {
    /// The object and its home, if `account` may perform `operation` on it.
    func lookup<Kind, Object>(
        _ id: ID<Kind>,
        _ kind: NamedKind<Kind, Object>,
        for account: AccountID,
        _ operation: HomeOperation
    ) throws(HomeServiceError) -> (Object, Home) {
        let homeID = try locate(id, kind, for: account, operation)
        return (Object.withTable(in: self) { $0[id]! }, homes[homeID]!)
    }

    /// The home of an object `account` may perform `operation` on, for a change that needs no more
    /// (``lookup(_:_:for:_:)`` copies the object and its home): the object's home and the caller's
    /// role in it are read where they lie (copies of the table, the object and the home retained
    /// each of their buffers: 700 instructions of a target value's update).
    func locate<Kind, Object>(
        _ id: ID<Kind>,
        _ kind: NamedKind<Kind, Object>,
        for account: AccountID,
        _ operation: HomeOperation
    ) throws(HomeServiceError) -> HomeID {
        guard let homeID = Object.withTable(in: self, { $0.read(id) { $0.home } }),
            let role = readHome(homeID, { $0.members[account] }) ?? nil
        else {
            throw HomeServiceError(.notFound, "no such \(kind.noun) \(id)")
        }
        try AccessRules.authorize(operation, role: role, homeName: homes[homeID]?.name ?? "")
        return homeID
    }

    /// The home a new object named `name` goes into, once the caller's rights and the name are checked.
    func homeForAdding<Kind, Object>(
        _ name: String,
        _ kind: NamedKind<Kind, Object>,
        to homeID: HomeID,
        as account: AccountID
    ) throws(HomeServiceError) -> Home {
        let home = try home(homeID, for: account, kind.addOperation)
        try checkNewName(name, kind: kind.noun, in: home)
        try ObjectLimits.check(
            home[keyPath: kind.homeList].count,
            against: limits[keyPath: kind.limit],
            "the \(kind.noun)s of home \"\(home.name)\""
        )
        return home
    }

    /// Puts an object in its table, its home's list and the namespace (a new one, or one loaded).
    func place<Kind, Object>(_ object: Object, _ kind: NamedKind<Kind, Object>) {
        let id = object.id
        let homeID = object.home
        Object.withTable(in: self) { $0[id] = object }
        homes[homeID]![keyPath: kind.homeList].append(id)
        index(object.name, kind: kind.noun, id: id.raw, in: homeID)
    }

    /// Places loaded objects, in creation order, as ``place(_:_:)`` does one by one; each home's list
    /// grows once (applying the key path cost about 600 instructions an object).
    func placeLoaded<Kind, Object>(_ objects: [Object], _ kind: NamedKind<Kind, Object>) {
        Object.withTable(in: self) { table in
            table.reserveCapacity(table.count + objects.count)
            for object in objects { table.insert(object, for: object.id) }
        }
        var listed: [HomeID: [ID<Kind>]] = [:]
        for object in objects {
            listed[object.home, default: []].append(object.id)
            index(object.name, kind: kind.noun, id: object.id.raw, in: object.home)
        }
        for (homeID, ids) in listed { homes[homeID]![keyPath: kind.homeList].append(contentsOf: ids) }
    }

    /// Places a new object and records it; announces it if asked.
    func insert<Kind, Object>(_ object: Object, _ kind: NamedKind<Kind, Object>, announcedBy account: AccountID?) {
        place(object, kind)
        let id = object.id
        let homeID = object.home
        let name = object.name
        touch(kind.record(id))
        if let account {
            emit(ChangeEvent(kind.added, object: id.raw, name: name), in: homeID, by: .account(account))
        }
    }

    /// Renames an object after `check` (for rules of its own) and the naming rules.
    /// - Throws: the naming codes, 33 for an equivalent name, 31 for a name taken in the home.
    func rename<Kind, Object>(
        _ id: ID<Kind>,
        _ kind: NamedKind<Kind, Object>,
        to name: String,
        as account: AccountID,
        sharing: Set<UniqueIdentifier> = [],
        check: (Object, Home) throws(HomeServiceError) -> Void = { _, _ in }
    ) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let (object, home) = try lookup(id, kind, for: account, kind.renameOperation)
        try check(object, home)
        let current = object.name
        try checkRename(of: id.raw, from: current, to: name, kind: kind.noun, in: home, sharing: sharing)
        Object.withTable(in: self) { $0[id]!.name = name }
        reindex(from: current, to: name, kind: kind.noun, id: id.raw, in: home.id)
        touch(kind.record(id))
        emit(ChangeEvent(kind.renamed, object: id.raw, name: name), in: home.id, by: .account(account))
    }

    /// Removes an object that nothing else refers to, for a caller allowed to.
    func remove<Kind, Object>(
        _ id: ID<Kind>,
        _ kind: NamedKind<Kind, Object>,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        try beginMutation()
        defer { endMutation() }
        _ = try lookup(id, kind, for: account, kind.removeOperation)
        delete(id, kind, announcedBy: .account(account))
    }

    /// Takes an object out of its table, its home's list (if the home is still there) and the
    /// namespace; announces it if asked.
    func delete<Kind, Object>(_ id: ID<Kind>, _ kind: NamedKind<Kind, Object>, announcedBy initiator: Initiator?) {
        guard let object = Object.table(in: self)[id] else { return }
        let homeID = object.home
        Object.withTable(in: self) { $0[id] = nil }
        homes[homeID]?[keyPath: kind.homeList].removeAll { $0 == id }
        unindex(object.name, heldBy: id.raw, in: homeID)
        touch(kind.record(id))
        if let initiator { emit(ChangeEvent(kind.removed, object: id.raw), in: homeID, by: initiator) }
    }
}
