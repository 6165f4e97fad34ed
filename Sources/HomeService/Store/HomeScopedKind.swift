/// An id kind whose objects each belong to one home (rooms, zones, accessories, services,
/// characteristics, service groups, action sets, triggers): the home of such an id is read from its
/// own kind's table, one probe, where an id of unknown kind took up to eight, each copying the
/// object it found (1,300 instructions for an action set's).
public protocol HomeScopedKind {
    /// The home of the object `id` names, read in place, or `nil` if there is none.
    static func home(of id: ID<Self>, in store: HomeStore) -> HomeID?
}

extension IDKind.Room: HomeScopedKind {
    public static func home(of id: RoomID, in store: HomeStore) -> HomeID? { store.rooms.read(id) { $0.home } }
}

extension IDKind.Zone: HomeScopedKind {
    public static func home(of id: ZoneID, in store: HomeStore) -> HomeID? { store.zones.read(id) { $0.home } }
}

extension IDKind.Accessory: HomeScopedKind {
    public static func home(of id: AccessoryID, in store: HomeStore) -> HomeID? {
        store.accessories.read(id) { $0.home }
    }
}

extension IDKind.Service: HomeScopedKind {
    public static func home(of id: ServiceID, in store: HomeStore) -> HomeID? { store.services.read(id) { $0.home } }
}

extension IDKind.Characteristic: HomeScopedKind {
    public static func home(of id: CharacteristicID, in store: HomeStore) -> HomeID? {
        store.characteristics.read(id) { $0.home }
    }
}

extension IDKind.ServiceGroup: HomeScopedKind {
    public static func home(of id: ServiceGroupID, in store: HomeStore) -> HomeID? {
        store.serviceGroups.read(id) { $0.home }
    }
}

extension IDKind.ActionSet: HomeScopedKind {
    public static func home(of id: ActionSetID, in store: HomeStore) -> HomeID? {
        store.actionSets.read(id) { $0.home }
    }
}

extension IDKind.Trigger: HomeScopedKind {
    public static func home(of id: TriggerID, in store: HomeStore) -> HomeID? { store.triggers.read(id) { $0.home } }
}
