/// Checked reads for callers outside the domain (the API edge): every one checks that the caller is
/// a member of the home, and reports an object of a home they cannot see exactly like a missing one.
extension HomeStore {
    /// A home and everything in it, as one member sees it.
    public struct HomeView: Sendable {
        public let home: Home
        /// The caller's role.
        public let role: HomeRole
        public let isPrimary: Bool
        /// The room for the entire home first, then the others in the order they were added.
        public let rooms: [Room]
        public let zones: [Zone]
        /// In the order they were added, each with its services and their characteristics.
        public let accessories: [AccessoryState]
        public let serviceGroups: [ServiceGroup]
        public let actionSets: [ActionSet]
        public let triggers: [TimerTrigger]
        public let users: [HomeUser]
    }

    /// An accessory with its services, in the accessory's order.
    public struct AccessoryState: Sendable {
        public let accessory: Accessory
        public let services: [ServiceState]
    }

    /// A service with its characteristics, in the service's order.
    public struct ServiceState: Sendable {
        public let service: Service
        public let characteristics: [CharacteristicState]
    }

    /// A characteristic with its cached value, as one caller sees it.
    public struct CharacteristicState: Sendable {
        public let characteristic: Characteristic
        public let entry: CharacteristicCache.Entry
        public let notificationEnabled: Bool
    }

    /// A member of a home.
    public struct HomeUser: Hashable, Sendable {
        /// Its id in this home, which is all other members see of it (``UserID``).
        public let id: UserID
        public let account: AccountID
        public let name: String
        public let role: HomeRole
        public let isOwner: Bool
    }

    /// How much the store holds, for logs and server info.
    public struct Counts: Sendable {
        public let accounts: Int
        public let homes: Int
        public let accessories: Int
        public let characteristics: Int
    }

    public var counts: Counts {
        Counts(
            accounts: accounts.count,
            homes: homes.count,
            accessories: accessories.count,
            characteristics: characteristics.count
        )
    }

    /// The home with all its objects.
    public func view(of id: HomeID, as account: AccountID) throws(HomeServiceError) -> HomeView {
        let home = try home(id, for: account, .readHome)
        // Nested in order rather than tables by id: whole homes are read in order (about a third
        // of a large home's GetHome went into hashing every id into the tables).
        let accessoryStates = home.accessories.compactMap { id -> AccessoryState? in
            guard let accessory = accessories[id] else { return nil }
            let serviceStates = accessory.services.compactMap { serviceID -> ServiceState? in
                guard let service = self.services[serviceID] else { return nil }
                return ServiceState(
                    service: service,
                    characteristics: service.characteristics.map { state(of: characteristics[$0]!, for: account) }
                )
            }
            return AccessoryState(accessory: accessory, services: serviceStates)
        }
        return HomeView(
            home: home,
            role: home.members[account]!,
            isPrimary: accounts[account]?.primaryHome == id,
            rooms: ([home.roomForEntireHome] + home.rooms).compactMap { rooms[$0] },
            zones: home.zones.compactMap { zones[$0] },
            accessories: accessoryStates,
            serviceGroups: home.serviceGroups.compactMap { serviceGroups[$0] },
            actionSets: home.actionSets.compactMap { actionSets[$0] },
            triggers: home.triggers.compactMap { triggers[$0] },
            users: users(of: home)
        )
    }

    /// Whether `id` is the caller's primary home (after checking they may see it).
    public func isPrimaryHome(_ id: HomeID, for account: AccountID) -> Bool {
        accounts[account]?.primaryHome == id
    }

    /// Whether `account` enabled notifications on the characteristic (its own setting: no home check).
    public func notificationEnabled(on id: CharacteristicID, for account: AccountID) -> Bool {
        notificationsEnabled[id]?.contains(account) ?? false
    }

    /// The revision of the home's latest change in memory: the state the queries show. Changes up
    /// to it are committed once ``currentTicket`` is.
    public func revision(of id: HomeID, as account: AccountID) throws(HomeServiceError) -> UInt64 {
        try home(id, for: account, .readHome).revision
    }

    /// Checks that object `id` is in home `homeID` and the caller may see that home; returns what it
    /// found, for a mutation that follows at once (``CheckedObject``).
    /// - Throws: 2 for a missing object, one in a home the caller cannot see, or a home they cannot
    ///   see; 11 for an object of another home the caller is a member of.
    @discardableResult
    public func checkObject<Kind: HomeScopedKind>(
        _ id: ID<Kind>,
        isIn homeID: HomeID,
        as account: AccountID
    ) throws(HomeServiceError) -> CheckedObject<Kind> {
        // Membership read in place: `homes[id]` copies the home, retaining each of its collections.
        guard let role = readHome(homeID, { $0.members[account] }) ?? nil else { throw AccessRules.noSuchHome }
        guard let objectHome = Kind.home(of: id, in: self) else {
            throw HomeServiceError(.notFound, "no such object \(id)")
        }
        guard objectHome == homeID else {
            if readHome(objectHome, { $0.members[account] != nil }) == true {
                throw HomeServiceError(
                    .objectAssociatedToAnotherHome,
                    "object \(id) belongs to another home than \"\(homes[homeID]?.name ?? "")\""
                )
            }
            throw HomeServiceError(.notFound, "no such object \(id)")
        }
        return CheckedObject(id: id, home: homeID, role: role)
    }

    public func room(_ id: RoomID, as account: AccountID) throws(HomeServiceError) -> Room {
        try object(id, in: rooms, kind: "room", home: \.home, for: account, .readHome).0
    }

    /// The accessories in a room, in the order they were added (without building the whole home).
    public func accessories(inRoom id: RoomID, as account: AccountID) throws(HomeServiceError) -> [AccessoryID] {
        let (room, home) = try object(id, in: rooms, kind: "room", home: \.home, for: account, .readHome)
        return home.accessories.filter { accessories[$0]?.room == room.id }
    }

    public func zone(_ id: ZoneID, as account: AccountID) throws(HomeServiceError) -> Zone {
        try object(id, in: zones, kind: "zone", home: \.home, for: account, .readHome).0
    }

    public func accessory(_ id: AccessoryID, as account: AccountID) throws(HomeServiceError) -> Accessory {
        try object(id, in: accessories, kind: "accessory", home: \.home, for: account, .readHome).0
    }

    public func service(_ id: ServiceID, as account: AccountID) throws(HomeServiceError) -> Service {
        try service(id, for: account, .readHome).0
    }

    public func serviceGroup(_ id: ServiceGroupID, as account: AccountID) throws(HomeServiceError) -> ServiceGroup {
        try object(id, in: serviceGroups, kind: "service group", home: \.home, for: account, .readHome).0
    }

    public func actionSet(_ id: ActionSetID, as account: AccountID) throws(HomeServiceError) -> ActionSet {
        try object(id, in: actionSets, kind: "action set", home: \.home, for: account, .readHome).0
    }

    public func trigger(_ id: TriggerID, as account: AccountID) throws(HomeServiceError) -> TimerTrigger {
        try object(id, in: triggers, kind: "trigger", home: \.home, for: account, .readHome).0
    }

    /// The service a characteristic belongs to, if the caller may see it.
    public func service(ofCharacteristic id: CharacteristicID, as account: AccountID) -> ServiceID? {
        try? characteristic(id, for: account, .readCharacteristic).service
    }

    /// A characteristic with its cached value, whatever its properties (for its metadata).
    public func characteristicState(
        _ id: CharacteristicID,
        as account: AccountID
    ) throws(HomeServiceError) -> CharacteristicState {
        state(of: try characteristic(id, for: account, .readCharacteristic), for: account)
    }

    /// The members of a home.
    public func users(in id: HomeID, as account: AccountID) throws(HomeServiceError) -> [HomeUser] {
        users(of: try home(id, for: account, .readHome))
    }

    /// The accounts the owner can add to homes. Owner only.
    public func allAccounts(by caller: AccountID) throws(HomeServiceError) -> [Account] {
        guard accounts[caller]?.isOwner == true else {
            throw HomeServiceError(.insufficientPrivileges, "only the owner lists accounts")
        }
        return accounts.values.sorted { $0.sequence < $1.sequence }
    }

    /// The account itself (for "who am I").
    public func account(_ id: AccountID) -> Account? {
        accounts[id]
    }

    private func users(of home: Home) -> [HomeUser] {
        home.members.compactMap { account, role in
            accounts[account].map {
                HomeUser(
                    id: UserID(account: account, home: home.id),
                    account: account,
                    name: $0.name,
                    role: role,
                    isOwner: account == home.owner
                )
            }
        }
        .sorted { (accounts[$0.account]!.sequence, $0.account) < (accounts[$1.account]!.sequence, $1.account) }
    }

    private func state(of characteristic: Characteristic, for account: AccountID) -> CharacteristicState {
        CharacteristicState(
            characteristic: characteristic,
            entry: characteristic.properties.contains(.readable)
                ? cache[characteristic.slot] : CharacteristicCache.Entry(value: nil, updatedAt: 0),
            notificationEnabled: notificationsEnabled[characteristic.id]?.contains(account) ?? false
        )
    }
}
