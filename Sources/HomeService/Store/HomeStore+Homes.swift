/// The home manager (a user's homes and primary home) and each home's users.
extension HomeStore {
    /// The name given to each home's room for the entire home.
    public static let roomForEntireHomeName = "Default Room"

    /// The homes `account` is a member of, in the order they were added.
    public func homes(of account: AccountID) -> [Home] {
        (homeIDsByMember[account] ?? []).compactMap { homes[$0] }.sorted { $0.sequence < $1.sequence }
    }

    /// The home, if `account` may see it.
    public func home(_ id: HomeID, as account: AccountID) throws(HomeServiceError) -> Home {
        try home(id, for: account, .readHome)
    }

    /// Adds a home administered by `account`, with its room for the entire home and the four built-in
    /// action sets. The account's first home becomes its primary home.
    /// - Throws: the naming codes; 32 if the account already has a home with a similar name.
    public func addHome(named name: String, as account: AccountID) throws(HomeServiceError) -> Home {
        try checkAcceptingChanges()
        guard accounts[account] != nil else { throw HomeServiceError(.notFound, "no such account \(account)") }
        try NameRules.validate(name, kind: "home")
        try checkHomeNameIsFree(name, for: account, except: nil)
        let home = Home(
            id: .random(),
            name: name,
            owner: account,
            roomForEntireHome: .random(),
            members: [:],
            sequence: nextSequenceNumber()
        )
        homes[home.id] = home
        logs[home.id] = newLog(after: 0)
        index(name, kind: "home", id: home.id.raw, in: home.id)
        touch(.home(home.id))
        setRole(.administrator, of: account, in: home.id)
        let room = Room(
            id: home.roomForEntireHome,
            home: home.id,
            name: Self.roomForEntireHomeName,
            sequence: nextSequenceNumber()
        )
        rooms[room.id] = room
        index(room.name, kind: "room", id: room.id.raw, in: home.id)
        touch(.room(room.id))
        for (kind, name) in ActionSet.Kind.builtInNames {
            insertActionSet(named: name, kind: kind, in: home.id, announcedBy: nil)
        }
        let initiator = Initiator.account(account)
        emit(ChangeEvent(.homeAdded, object: home.id.raw, name: name), in: home.id, by: initiator)
        if accounts[account]?.primaryHome == nil {
            setPrimary(home.id, for: account)
        }
        submitPending()
        return homes[home.id]!
    }

    /// Removes a home and everything in it, for every member.
    public func removeHome(_ id: HomeID, as account: AccountID) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let home = try home(id, for: account, .removeHome)
        emit(ChangeEvent(.homeRemoved, object: id.raw), in: id, by: .account(account))
        // The home goes first, so its objects go without unlisting themselves one by one.
        homes[id] = nil
        for accessory in home.accessories where accessories[accessory]?.bridge == nil {
            deleteAccessory(accessory)
        }
        for room in home.rooms + [home.roomForEntireHome] { delete(room, NamedKinds.room, announcedBy: nil) }
        for zone in home.zones { delete(zone, NamedKinds.zone, announcedBy: nil) }
        for group in home.serviceGroups { delete(group, NamedKinds.serviceGroup, announcedBy: nil) }
        for actionSet in home.actionSets { deleteActionSet(actionSet, announcedBy: nil) }
        for trigger in home.triggers { delete(trigger, NamedKinds.trigger, announcedBy: nil) }
        for member in home.members.keys {
            setRole(nil, of: member, in: id)
            if accounts[member]?.primaryHome == id {
                accounts[member]!.primaryHome = nil
                touch(.account(member))
            }
        }
        logs[id] = nil
        names[id] = nil
        touch(.home(id))
        touch(.removedHomeEvents(id))
        submitPending()
    }

    /// Renames a home.
    /// - Throws: the naming codes; 33 for an equivalent name; 32 if the caller has another home with
    ///   a similar name; 31 if an object in the home has it.
    public func renameHome(_ id: HomeID, to name: String, as account: AccountID) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let home = try home(id, for: account, .renameHome)
        try checkRename(of: id.raw, from: home.name, to: name, kind: "home", in: home)
        try checkHomeNameIsFree(name, for: account, except: id)
        homes[id]!.name = name
        reindex(from: home.name, to: name, kind: "home", id: id.raw, in: id)
        touch(.home(id))
        emit(ChangeEvent(.homeNameUpdated, object: id.raw, name: name), in: id, by: .account(account))
        submitPending()
    }

    /// Makes `id` the caller's primary home.
    public func setPrimaryHome(_ id: HomeID, as account: AccountID) throws(HomeServiceError) {
        try checkAcceptingChanges()
        _ = try home(id, for: account, .readHome)
        guard accounts[account]?.primaryHome != id else { return }
        setPrimary(id, for: account)
        submitPending()
    }

    private func setPrimary(_ id: HomeID, for account: AccountID) {
        accounts[account]!.primaryHome = id
        touch(.account(account))
        emit(ChangeEvent(.primaryHomeUpdated, object: id.raw, container: account.raw), in: id, by: .account(account))
    }

    private func checkHomeNameIsFree(_ name: String, for account: AccountID, except: HomeID?) throws(HomeServiceError) {
        if let other = homes(of: account).first(where: { $0.id != except && NameRules.areSimilar($0.name, name) }) {
            throw HomeServiceError(
                .homeWithSimilarNameExists,
                "home name \"\(name)\" is too similar to your home \"\(other.name)\""
            )
        }
    }

    // MARK: Users

    /// Adds an existing account to the home as a guest or administrator.
    /// - Throws: 2 for an unknown account; 1 if it is already a member.
    public func addUser(
        _ user: AccountID,
        to id: HomeID,
        role: HomeRole,
        as account: AccountID
    ) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let home = try home(id, for: account, .addUser)
        guard accounts[user] != nil else { throw HomeServiceError(.notFound, "no such account \(user)") }
        guard home.members[user] == nil else {
            throw HomeServiceError(.alreadyExists, "account \(user) is already a user of home \"\(home.name)\"")
        }
        setRole(role, of: user, in: id)
        emit(
            ChangeEvent(.userAdded, object: user.raw, flag: role == .administrator),
            in: id,
            by: .account(account)
        )
        submitPending()
    }

    /// Removes a user from the home; the home's owner cannot be removed.
    public func removeUser(_ user: AccountID, from id: HomeID, as account: AccountID) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let home = try home(id, for: account, .removeUser)
        try checkChangeableMember(user, of: home)
        setRole(nil, of: user, in: id)
        if accounts[user]?.primaryHome == id {
            accounts[user]!.primaryHome = nil
            touch(.account(user))
        }
        emit(ChangeEvent(.userRemoved, object: user.raw), in: id, by: .account(account))
        submitPending()
    }

    /// Makes a user an administrator or a guest; the owner stays an administrator.
    public func updateUserAccess(
        _ user: AccountID,
        in id: HomeID,
        role: HomeRole,
        as account: AccountID
    ) throws(HomeServiceError) {
        try checkAcceptingChanges()
        let home = try home(id, for: account, .updateUserAccess)
        try checkChangeableMember(user, of: home)
        guard home.members[user] != role else { return }
        setRole(role, of: user, in: id)
        emit(
            ChangeEvent(.accessControlUpdated, object: user.raw, flag: role == .administrator),
            in: id,
            by: .account(account)
        )
        submitPending()
    }

    private func checkChangeableMember(_ user: AccountID, of home: Home) throws(HomeServiceError) {
        guard home.members[user] != nil else {
            throw HomeServiceError(.notFound, "account \(user) is not a user of home \"\(home.name)\"")
        }
        guard user != home.owner else {
            throw HomeServiceError(
                .operationNotSupported,
                "the owner of home \"\(home.name)\" cannot be removed or made a guest"
            )
        }
    }
}
