/// Finding objects for a caller: every lookup checks membership and rights, and an object in a home
/// the caller may not see is reported exactly like one that does not exist.
extension HomeStore {
    /// The home, if `account` may perform `operation` in it.
    /// - Throws: 2 "no such home" for a missing home or a non-member; 17 for a guest asking too much.
    func home(_ id: HomeID, for account: AccountID, _ operation: HomeOperation) throws(HomeServiceError) -> Home {
        guard let home = homes[id] else { throw AccessRules.noSuchHome }
        try AccessRules.authorize(operation, role: home.members[account], homeName: home.name)
        return home
    }

    /// A part of a home, read in place: `homes[id]` copies the home, retaining each of its
    /// collections. (An in-place access to the dictionary's entry moves the home out and back, so
    /// `part` must not look at `homes` itself.)
    func readHome<Part>(_ id: HomeID, _ part: (Home) -> Part) -> Part? {
        // Unwrapped as an lvalue (`home!`): binding the optional's value, or comparing it with
        // nil, copied the home.
        func readInPlace(_ home: inout Home?) -> Part? {
            switch home {
            case .none: nil
            case .some: part(home!)
            }
        }
        return readInPlace(&homes[id])
    }

    /// An object of a home the caller may act on.
    func object<Kind, Object>(
        _ id: ID<Kind>,
        in table: IDTable<Kind, Object>,
        kind: String,
        home homeOf: (Object) -> HomeID,
        for account: AccountID,
        _ operation: HomeOperation
    ) throws(HomeServiceError) -> (Object, Home) {
        guard let object = table[id], let home = homes[homeOf(object)], let role = home.members[account] else {
            throw HomeServiceError(.notFound, "no such \(kind) \(id)")
        }
        try AccessRules.authorize(operation, role: role, homeName: home.name)
        return (object, home)
    }

    func service(
        _ id: ServiceID,
        for account: AccountID,
        _ operation: HomeOperation
    ) throws(HomeServiceError) -> (
        Service, Home
    ) {
        try object(id, in: services, kind: "service", home: \.home, for: account, operation)
    }

    /// A characteristic the caller may act on; its home is checked in place, not copied (a copy of
    /// a home retains each of its collections, nine references, and a write checks twice).
    func characteristic(
        _ id: CharacteristicID,
        for account: AccountID,
        _ operation: HomeOperation
    ) throws(HomeServiceError) -> Characteristic {
        // The subscript's copy: `read(id) { $0 }` copied it twice on the way out (`Optional.map`).
        guard let characteristic = characteristics[id],
            let role = readHome(characteristic.home, { $0.members[account] }) ?? nil
        else {
            throw HomeServiceError(.notFound, "no such characteristic \(id)")
        }
        if !operation.isAllowedForGuests {
            try AccessRules.authorize(operation, role: role, homeName: homes[characteristic.home]?.name ?? "")
        }
        return characteristic
    }

    /// An object of the same home as the one being changed (a room for a zone, a service for a group).
    /// - Throws: ``notInHome(_:of:kind:home:for:)``'s refusal.
    func sameHome<Kind, Object>(
        _ id: ID<Kind>,
        in table: IDTable<Kind, Object>,
        kind: String,
        home homeOf: (Object) -> HomeID,
        as homeID: HomeID,
        for account: AccountID
    ) throws(HomeServiceError) -> Object {
        let object = table[id]
        guard let object, homeOf(object) == homeID else {
            throw notInHome(id, of: object.map(homeOf), kind: kind, home: homeID, for: account)
        }
        return object
    }

    /// The refusal of an object (of home `objectHome`, or none) where one of home `homeID` is
    /// needed: 11 (ObjectAssociatedToAnotherHome) for an object of another home the caller is a
    /// member of; 2 otherwise, never a hint that an object of a home they cannot see exists.
    func notInHome<Kind>(
        _ id: ID<Kind>,
        of objectHome: HomeID?,
        kind: String,
        home homeID: HomeID,
        for account: AccountID
    ) -> HomeServiceError {
        let homeName = homes[homeID]?.name ?? ""
        if let objectHome, let other = homes[objectHome], other.members[account] != nil {
            return HomeServiceError(
                .objectAssociatedToAnotherHome,
                "\(kind) \(id) belongs to home \"\(other.name)\", not \"\(homeName)\""
            )
        }
        return HomeServiceError(.notFound, "no such \(kind) \(id) in home \"\(homeName)\"")
    }

    // MARK: Names

    /// Checks a new object's name: the character rules, then collisions in the home's namespace.
    /// - Throws: 3, 46, 36, 35, 60 (``NameRules``), 31 (similar to the home or an object in it).
    func checkNewName(_ name: String, kind: String, in home: Home) throws(HomeServiceError) {
        try NameRules.validate(name, kind: kind)
        try checkNameIsFree(name, kind: kind, in: home)
    }

    /// Checks a rename of object `id`, now called `current`.
    /// - Parameter sharing: objects that may keep holding the same name (an accessory's services).
    /// - Throws: the character rules' codes, 33 (equivalent to its current name), 31 (similar to
    ///   the home or another object in it).
    func checkRename(
        of id: UniqueIdentifier,
        from current: String,
        to name: String,
        kind: String,
        in home: Home,
        sharing: Set<UniqueIdentifier> = []
    ) throws(HomeServiceError) {
        try NameRules.validate(name, kind: kind)
        if NameRules.areSimilar(current, name) {
            throw HomeServiceError(
                .renameWithSimilarName,
                "\(kind) \"\(current)\" cannot be renamed to \"\(name)\": the names are equivalent"
            )
        }
        try checkNameIsFree(name, kind: kind, in: home, except: sharing.union([id]))
    }

    /// - Throws: 31 if the home or one of its objects (other than `allowed`) has a similar name.
    func checkNameIsFree(
        _ name: String,
        kind: String,
        in home: Home,
        except allowed: Set<UniqueIdentifier> = []
    ) throws(HomeServiceError) {
        if NameRules.areSimilar(home.name, name) {
            throw HomeServiceError(
                .objectWithSimilarNameExistsInHome,
                "\(kind) name \"\(name)\" is too similar to the name of its home \"\(home.name)\""
            )
        }
        if let holder = names[home.id]?.holder(of: name, except: allowed) {
            throw HomeServiceError(
                .objectWithSimilarNameExistsInHome,
                "\(kind) name \"\(name)\" is too similar to the \(holder.kind) \"\(holder.name)\" in home \"\(home.name)\""
            )
        }
    }

    func index(_ name: String, kind: String, id: UniqueIdentifier, in home: HomeID) {
        names[home, default: HomeNamespace()].insert(NameHolder(id: id, kind: kind, name: name))
    }

    func unindex(_ name: String, heldBy id: UniqueIdentifier, in home: HomeID) {
        names[home]?.remove(name, heldBy: id)
    }

    func reindex(from old: String, to new: String, kind: String, id: UniqueIdentifier, in home: HomeID) {
        unindex(old, heldBy: id, in: home)
        index(new, kind: kind, id: id, in: home)
    }
}
