/// The home manager (a user's homes and primary home) and each home's users.
extension HomeStore {
    /// The name given to each home's room for the entire home.
    public static let roomForEntireHomeName = "Default Room"

    /// What ``removeHome(_:as:)`` did.
    public enum HomeRemoval: Sendable, Equatable {
        /// The owner asked: the home is gone for every member.
        case removed
        /// Another member asked: their membership ended; the home stays for everyone else.
        case left
    }

    /// The homes `account` is a member of, in the order they were added.
    public func homes(of account: AccountID) -> [Home] {
        (homeIDsByMember[account] ?? []).compactMap { homes[$0] }.sorted { $0.sequence < $1.sequence }
    }

    /// The home, if `account` may see it.
    public func home(_ id: HomeID, as account: AccountID) throws(HomeServiceError) -> Home {
        try home(id, for: account, .readHome)
    }

    /// Adds a home administered by `account`, with its room for the entire home and the four built-in
    /// action sets. The account's first home becomes its primary home. The built-in room and action
    /// sets keep their names even when the home is named like one of them.
    /// - Throws: the naming codes; 32 if the account already has a home with a similar name; 49 past
    ///   the account's home limit.
    public func addHome(named name: String, as account: AccountID) throws(HomeServiceError) -> Home {
        try beginMutation()
        defer { endMutation() }
        guard accounts[account] != nil else { throw HomeServiceError(.notFound, "no such account \(account)") }
        try NameRules.validate(name, kind: "home")
        try checkHomeNameIsFree(name, for: account, except: nil)
        try ObjectLimits.check(
            homeIDsByMember[account]?.count ?? 0,
            against: limits.homesPerAccount,
            "your homes"
        )
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
        names[home.id] = HomeNamespace()
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
            setPrimary(home.id, for: account, by: initiator)
        }
        return homes[home.id]!
    }

    /// Removes a home for every member when its owner asks; when another member (administrator or
    /// guest) asks, they leave it instead and the home stays for everyone else, as in HomeKit. A
    /// member whose primary home this was gets their oldest remaining home as primary.
    public func removeHome(_ id: HomeID, as account: AccountID) throws(HomeServiceError) -> HomeRemoval {
        try beginMutation()
        defer { endMutation() }
        guard let home = homes[id], home.members[account] != nil else { throw AccessRules.noSuchHome }
        let initiator = Initiator.account(account)
        guard account == home.owner else {
            endMembership(of: account, in: id, by: initiator)
            emit(ChangeEvent(.userRemoved, object: account.raw), in: id, by: initiator)
            return .left
        }
        emit(ChangeEvent(.homeRemoved, object: id.raw), in: id, by: initiator)
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
            endMembership(of: member, in: id, by: initiator)
        }
        logs[id] = nil
        names[id] = nil
        touch(.home(id))
        touch(.removedHomeEvents(id))
        return .removed
    }

    /// Renames a home. Its name must differ from every other home of every member, not only the
    /// caller's, so that nobody ends up with two homes of similar names.
    /// - Throws: the naming codes; 33 for an equivalent name; 32 if a member has another home with a
    ///   similar name; 31 if an object in the home has it.
    public func renameHome(_ id: HomeID, to name: String, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let home = try home(id, for: account, .renameHome)
        try NameRules.validate(name, kind: "home")
        if NameRules.areSimilar(home.name, name) {
            throw HomeServiceError(
                .renameWithSimilarName,
                "home \"\(home.name)\" cannot be renamed to \"\(name)\": the names are equivalent"
            )
        }
        if let holder = names[id]?.holder(of: name) {
            throw HomeServiceError(
                .objectWithSimilarNameExistsInHome,
                "home name \"\(name)\" is too similar to the \(holder.kind) \"\(holder.name)\" in it"
            )
        }
        for member in home.members.keys.sorted(by: { $0 == account && $1 != account }) {
            try checkHomeNameIsFree(name, for: member, except: id, asking: account)
        }
        homes[id]!.name = name
        touch(.home(id))
        emit(ChangeEvent(.homeNameUpdated, object: id.raw, name: name), in: id, by: .account(account))
    }

    /// Sets the IANA time zone the home's timer triggers count days and weeks in. Enabled triggers
    /// keep their fire dates; their next firing follows the new zone.
    /// - Throws: 3 for a name that is not an IANA time zone.
    public func setTimeZone(of id: HomeID, to identifier: String, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let home = try home(id, for: account, .updateHomeTimeZone)
        try TriggerRules.checkTimeZone(identifier)
        guard home.timeZone != identifier else { return }
        homes[id]!.timeZone = identifier
        touch(.home(id))
        emit(ChangeEvent(.homeTimeZoneUpdated, object: id.raw, name: identifier), in: id, by: .account(account))
    }

    /// Makes `id` the caller's primary home.
    public func setPrimaryHome(_ id: HomeID, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        _ = try home(id, for: account, .readHome)
        guard accounts[account]?.primaryHome != id else { return }
        setPrimary(id, for: account, by: .account(account))
    }

    private func setPrimary(_ id: HomeID, for account: AccountID, by initiator: Initiator) {
        accounts[account]!.primaryHome = id
        touch(.account(account))
        emit(ChangeEvent(.primaryHomeUpdated, object: id.raw, container: account.raw), in: id, by: initiator)
    }

    /// Takes `account` out of the home; if it was their primary home, their oldest remaining home
    /// becomes primary (announced there), or they have none.
    private func endMembership(of account: AccountID, in id: HomeID, by initiator: Initiator) {
        setRole(nil, of: account, in: id)
        guard accounts[account]?.primaryHome == id else { return }
        if let next = homes(of: account).first {
            setPrimary(next.id, for: account, by: initiator)
        } else {
            accounts[account]!.primaryHome = nil
            touch(.account(account))
        }
    }

    /// - Parameter asking: who is asking; another account's homes are not named to them.
    private func checkHomeNameIsFree(
        _ name: String,
        for account: AccountID,
        except: HomeID?,
        asking: AccountID? = nil
    ) throws(HomeServiceError) {
        guard let other = homes(of: account).first(where: { $0.id != except && NameRules.areSimilar($0.name, name) })
        else { return }
        if let asking, asking != account {
            throw HomeServiceError(
                .homeWithSimilarNameExists,
                "home name \"\(name)\" is too similar to the name of another home of user \(account)"
            )
        }
        throw HomeServiceError(
            .homeWithSimilarNameExists,
            "home name \"\(name)\" is too similar to your home \"\(other.name)\""
        )
    }

    // MARK: Users

    /// Adds an existing account to the home as a guest or administrator.
    /// - Throws: 2 for an unknown account; 1 if it is already a member; 32 if the account already has
    ///   a home with a name similar to this one's; 49 past the home's user limit or the account's
    ///   home limit.
    public func addUser(
        _ user: AccountID,
        to id: HomeID,
        role: HomeRole,
        as account: AccountID
    ) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let home = try home(id, for: account, .addUser)
        guard accounts[user] != nil else { throw HomeServiceError(.notFound, "no such account \(user)") }
        guard home.members[user] == nil else {
            throw HomeServiceError(.alreadyExists, "account \(user) is already a user of home \"\(home.name)\"")
        }
        try checkHomeNameIsFree(home.name, for: user, except: nil, asking: account)
        try ObjectLimits.check(home.members.count, against: limits.usersPerHome, "the users of home \"\(home.name)\"")
        try ObjectLimits.check(
            homeIDsByMember[user]?.count ?? 0,
            against: limits.homesPerAccount,
            "the homes of user \(user)"
        )
        setRole(role, of: user, in: id)
        emit(
            ChangeEvent(.userAdded, object: user.raw, flag: role == .administrator),
            in: id,
            by: .account(account)
        )
    }

    /// Removes a user from the home; the home's owner cannot be removed.
    public func removeUser(_ userID: UserID, from id: HomeID, as account: AccountID) throws(HomeServiceError) {
        try beginMutation()
        defer { endMutation() }
        let home = try home(id, for: account, .removeUser)
        let user = try changeableMember(userID, of: home)
        endMembership(of: user, in: id, by: .account(account))
        emit(ChangeEvent(.userRemoved, object: user.raw), in: id, by: .account(account))
    }

    /// Makes a user an administrator or a guest; the owner stays an administrator.
    /// - Returns: the member's account.
    @discardableResult
    public func updateUserAccess(
        _ userID: UserID,
        in id: HomeID,
        role: HomeRole,
        as account: AccountID
    ) throws(HomeServiceError) -> AccountID {
        try beginMutation()
        defer { endMutation() }
        let home = try home(id, for: account, .updateUserAccess)
        let user = try changeableMember(userID, of: home)
        guard home.members[user] != role else { return user }
        setRole(role, of: user, in: id)
        emit(
            ChangeEvent(.accessControlUpdated, object: user.raw, flag: role == .administrator),
            in: id,
            by: .account(account)
        )
        return user
    }

    /// The account of the member `userID` names, unless it is the owner.
    private func changeableMember(_ userID: UserID, of home: Home) throws(HomeServiceError) -> AccountID {
        guard let user = home.members.keys.first(where: { UserID(account: $0, home: home.id) == userID }) else {
            throw HomeServiceError(.notFound, "no user \(userID) in home \"\(home.name)\"")
        }
        guard user != home.owner else {
            throw HomeServiceError(
                .operationNotSupported,
                "the owner of home \"\(home.name)\" cannot be removed or made a guest"
            )
        }
        return user
    }
}
