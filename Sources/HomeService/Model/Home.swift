/// A home: the unit of ownership and of change revisions. Its objects live in the store's tables and
/// are listed here in the order they were added (HomeKit's arrays keep that order).
public struct Home: Hashable, Sendable {
    public let id: HomeID
    public internal(set) var name: String
    /// The account that created it; it is an administrator and cannot be removed from the home.
    public let owner: AccountID
    /// The default room of every new accessory. It cannot be renamed, removed or put in a zone.
    public let roomForEntireHome: RoomID
    public internal(set) var members: [AccountID: HomeRole]
    /// The IANA time zone its timer triggers count days and weeks in ("Europe/Berlin"; "UTC" unless
    /// set).
    public internal(set) var timeZone: String = "UTC"
    public internal(set) var rooms: [RoomID] = []
    public internal(set) var zones: [ZoneID] = []
    /// Every accessory, bridged ones included, in the order they were added.
    public internal(set) var accessories: [AccessoryID] = []
    public internal(set) var serviceGroups: [ServiceGroupID] = []
    public internal(set) var actionSets: [ActionSetID] = []
    public internal(set) var triggers: [TriggerID] = []
    /// The revision of the latest change; every change event carries the revision it produced.
    public internal(set) var revision: UInt64 = 0
    /// Orders homes by creation across restarts.
    let sequence: Int64

    /// Counts one more change; returns its revision.
    mutating func advanceRevision() -> UInt64 {
        revision += 1
        return revision
    }
}

/// A room. Its accessories are those whose ``Accessory/room`` names it.
public struct Room: Hashable, Sendable {
    public let id: RoomID
    public let home: HomeID
    public internal(set) var name: String
    let sequence: Int64
}

/// A zone: a named set of rooms (a room may be in many zones).
public struct Zone: Hashable, Sendable {
    public let id: ZoneID
    public let home: HomeID
    public internal(set) var name: String
    public internal(set) var rooms: [RoomID]
    let sequence: Int64
}

/// A service group: a named set of services (a service may be in many groups).
public struct ServiceGroup: Hashable, Sendable {
    public let id: ServiceGroupID
    public let home: HomeID
    public internal(set) var name: String
    public internal(set) var services: [ServiceID]
    let sequence: Int64
}
