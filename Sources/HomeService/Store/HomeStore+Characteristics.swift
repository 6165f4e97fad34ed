/// Reading and writing characteristics through the cache, and value reports from accessories.
extension HomeStore {
    /// A cached read: the value, its time, and whether the accessory is reachable now.
    public struct CachedReading: Hashable, Sendable {
        public let entry: CharacteristicCache.Entry
        /// When `false`, the value is the last one known; a fresh read would fail with 4 (or 88).
        public let isReachable: Bool

        public init(entry: CharacteristicCache.Entry, isReachable: Bool) {
            self.entry = entry
            self.isReachable = isReachable
        }

        public var value: CharacteristicValue? { entry.value }
        public var updatedAt: Int64 { entry.updatedAt }
    }

    /// A characteristic write that ``checkWrite(_:_:as:)`` accepted, waiting for the accessory to
    /// accept it too (``writeValue(_:)``).
    public struct CheckedWrite: Sendable {
        public let characteristic: Characteristic
        let value: CharacteristicValue
        let account: AccountID
        /// ``writeCheckVersion`` when the write was checked.
        let version: UInt64
    }

    /// The cached value, its time and the accessory's reachability. Like HomeKit's `value`
    /// property, it answers for an unreachable accessory too, with the last value known; only a
    /// fresh read from the accessory fails with 4.
    /// - Throws: 6 for a characteristic that cannot be read; 61 if its accessory is blocked.
    public func readValue(
        _ id: CharacteristicID,
        as account: AccountID
    ) throws(HomeServiceError)
        -> CachedReading
    {
        let characteristic = try characteristic(id, for: account, .readCharacteristic)
        let isReachable = try checkReadable(characteristic)
        return CachedReading(entry: cache[characteristic.slot], isReachable: isReachable)
    }

    /// ``readValue(_:as:)`` for a characteristic that a request says is in `homeID`, failing as
    /// ``checkObject(_:isIn:as:)`` would first: the API's hot path, so each table is looked up once
    /// (checking the object, then reading it, took twice as many hashed lookups).
    /// - Throws: 2 or 11 as ``checkObject(_:isIn:as:)``; then 6, 61.
    /// - Parameter memo: the caller's last confirmed membership (see ``isMember(_:of:memo:)``).
    public func readValue(
        _ id: CharacteristicID,
        in homeID: HomeID,
        as account: AccountID,
        memo: inout MembershipMemo?
    ) throws(HomeServiceError)
        -> CachedReading
    {
        // Every member may read, guests too, so membership is all there is to check; the member
        // index answers it without copying the home (a copy retains each of its collections).
        assert(HomeOperation.readCharacteristic.isAllowedForGuests)
        // Only the parts the read needs, read where they lie: copying the characteristic and its
        // accessory out of their tables retained their references, a fifth of the read's work.
        guard
            let (home, accessory, slot, isReadable) = characteristics.read(
                id,
                { ($0.home, $0.accessory, $0.slot, $0.properties.contains(.readable)) }
            ),
            home == homeID, isMember(account, of: homeID, memo: &memo)
        else {
            try checkObject(id, isIn: homeID, as: account)
            throw HomeServiceError(.notFound, "no such characteristic \(id)")
        }
        // The accessory's state as the slot holds it: no lookup of the accessory by id.
        let state = cache.accessoryState(slot)
        assert(state == availability(of: accessory), "the cache's accessory state is stale")
        if !isReadable || state.isBlocked {
            // The refusal, with its message, as every other check gives it.
            try checkReadable(characteristics[id]!)
        }
        return CachedReading(entry: cache[slot], isReachable: state.isReachable)
    }

    /// Checks a read that asks the accessory: the characteristic readable, the accessory available.
    /// - Returns: the characteristic's accessory.
    /// - Throws: 6 write-only; 61 blocked; 4 or 88 unreachable.
    public func checkFreshRead(_ id: CharacteristicID, as account: AccountID) throws(HomeServiceError) -> AccessoryID {
        let characteristic = try characteristic(id, for: account, .readCharacteristic)
        try checkReadable(characteristic)
        try checkAvailable(characteristic.accessory)
        return characteristic.accessory
    }

    /// Checks a write without doing it, before it is forwarded to the accessory.
    /// - Returns: the accepted write, to make with ``writeValue(_:)`` once the accessory accepted it.
    /// - Throws: 5 read-only; 61 blocked; 4 or 88 unreachable; 43–51 and 3 for a bad value.
    public func checkWrite(
        _ id: CharacteristicID,
        _ value: CharacteristicValue,
        as account: AccountID
    )
        throws(HomeServiceError) -> CheckedWrite
    {
        try checkAcceptingChanges()
        let characteristic = try characteristic(id, for: account, .writeCharacteristic)
        try checkWritable(characteristic.kind, value, accessory: characteristic.accessory)
        return CheckedWrite(characteristic: characteristic, value: value, account: account, version: writeCheckVersion)
    }

    /// Writes a value the accessory accepted into the cache. The caller learns of it from its
    /// reply; observers get an event.
    ///
    /// The accessory answered after a delay, so the write is checked again, unless nothing that a
    /// check reads has changed since `checked` was made (``writeCheckVersion``): then its decision
    /// stands, and the lookups, the caller's role and the value rules are not gone through twice.
    /// - Throws: as ``checkWrite(_:_:as:)``.
    @discardableResult
    public func writeValue(_ checked: CheckedWrite) throws(HomeServiceError) -> CharacteristicCache.Entry {
        try beginMutation()
        defer { endMutation() }
        let characteristic =
            checked.version == writeCheckVersion
            ? checked.characteristic
            : try checkWrite(checked.characteristic.id, checked.value, as: checked.account).characteristic
        record(checked.value, for: characteristic, by: .account(checked.account))
        return cache[characteristic.slot]
    }

    /// Checks and writes a value in one step (``checkWrite(_:_:as:)``, then ``writeValue(_:)``).
    @discardableResult
    public func writeValue(
        _ id: CharacteristicID,
        _ value: CharacteristicValue,
        as account: AccountID
    )
        throws(HomeServiceError) -> CharacteristicCache.Entry
    {
        try writeValue(checkWrite(id, value, as: account))
    }

    /// A value the accessory changed on its own (a sensor reading, a switch pressed).
    /// - Throws: 2 unless `reporter` is the characteristic's accessory or its bridge; 50 for a value
    ///   its own metadata forbids.
    public func reportValue(
        _ id: CharacteristicID,
        _ value: CharacteristicValue,
        by reporter: AccessoryID
    )
        throws(HomeServiceError)
    {
        try beginMutation()
        defer { endMutation() }
        let characteristic = try checkReport(of: id, value, by: reporter)
        record(value, for: characteristic, by: .accessory(reporter))
    }

    /// Checks a value report without recording it (to check a batch before any of it is applied).
    /// - Throws: 2 unless `reporter` is the characteristic's accessory or its bridge; 50 for a value
    ///   its own metadata forbids.
    @discardableResult
    public func checkReport(
        of id: CharacteristicID,
        _ value: CharacteristicValue,
        by reporter: AccessoryID
    ) throws(HomeServiceError) -> Characteristic {
        guard let characteristic = characteristics[id] else {
            throw HomeServiceError(.notFound, "accessory \(reporter) has no characteristic \(id)")
        }
        _ = try reportedAccessory(characteristic.accessory, by: reporter)
        do {
            let kind = characteristic.kind
            try ValueRules.validate(value, against: kind.contents.metadata, characteristic: kind.displayName)
        } catch {
            throw HomeServiceError(.accessorySentInvalidResponse, "accessory reported \(error.message)")
        }
        return characteristic
    }

    /// Turns value notifications for the caller on or off.
    /// - Throws: 7 for a characteristic without event support; 61, 4, 88 as for writes.
    public func enableNotification(
        _ id: CharacteristicID,
        _ enabled: Bool,
        as account: AccountID
    )
        throws(HomeServiceError)
    {
        let characteristic = try characteristic(id, for: account, .enableNotification)
        guard characteristic.properties.contains(.supportsEventNotification) else {
            throw HomeServiceError(
                .notificationNotSupported,
                "\(characteristic.displayName) does not support notifications"
            )
        }
        try checkAvailable(characteristic.accessory)
        if enabled {
            notificationsEnabled[id, default: []].insert(account)
        } else {
            notificationsEnabled[id]?.remove(account)
        }
    }

    /// Whether `account` has notifications on for the characteristic.
    public func isNotificationEnabled(_ id: CharacteristicID, for account: AccountID) -> Bool {
        notificationsEnabled[id]?.contains(account) ?? false
    }

    // MARK: The hot path by slot

    /// The cache slot of a characteristic the caller may read, for repeated reads without lookups.
    public func readableSlot(
        _ id: CharacteristicID,
        as account: AccountID
    ) throws(HomeServiceError)
        -> CharacteristicCache.Slot
    {
        let characteristic = try characteristic(id, for: account, .readCharacteristic)
        try checkReadable(characteristic)
        return characteristic.slot
    }

    // MARK: Checks

    /// - Returns: whether its accessory is reachable.
    @discardableResult
    func checkReadable(_ characteristic: Characteristic) throws(HomeServiceError) -> Bool {
        guard characteristic.properties.contains(.readable) else {
            throw HomeServiceError(.writeOnlyCharacteristic, "\(characteristic.displayName) is write-only")
        }
        let accessory = accessories[characteristic.accessory]!
        try checkNotBlocked(accessory)
        return accessory.isReachable
    }

    /// - Parameter accessory: the accessory that must take the write now (a write), or `nil` for a
    ///   value it will take some day (an action stored in a set).
    /// - Throws: 5, then (for a write now) 61, 4, 88, then the value rules' codes.
    func checkWritable(
        _ kind: CharacteristicKind,
        _ value: CharacteristicValue,
        accessory: AccessoryID?
    )
        throws(HomeServiceError)
    {
        guard kind.properties.contains(.writable) else {
            throw HomeServiceError(.readOnlyCharacteristic, "\(kind.displayName) is read-only")
        }
        if let accessory { try checkAvailable(accessory) }
        try ValueRules.validate(value, against: kind.contents.metadata, characteristic: kind.displayName)
    }

    func record(_ value: CharacteristicValue, for characteristic: Characteristic, by initiator: Initiator) {
        cache.set(characteristic.slot, to: value, at: now)
        touch(.value(characteristic.id))
        emit(
            ChangeEvent(
                .characteristicValueUpdated,
                object: characteristic.id.raw,
                container: characteristic.accessory.raw,
                value: value
            ),
            in: characteristic.home,
            by: initiator
        )
    }
}

/// An account's membership of a home as the store last confirmed it, kept by whoever asks often
/// (a connection): it stands while no membership anywhere has changed since, so a connection
/// reading one home call after call skips the two hashed lookups of the membership check.
public struct MembershipMemo: Sendable {
    @usableFromInline let account: AccountID
    @usableFromInline let home: HomeID
    @usableFromInline let version: UInt64
    @usableFromInline let role: HomeRole
}

extension HomeStore {
    /// Whether `account` is a member of `homeID` (``role(of:in:memo:)``).
    func isMember(_ account: AccountID, of homeID: HomeID, memo: inout MembershipMemo?) -> Bool {
        role(of: account, in: homeID, memo: &memo) != nil
    }

    /// `account`'s role in `homeID`, `nil` for a non-member (or no such home): from `memo` when it
    /// confirmed exactly this and no membership has changed since (a role change counts: it goes
    /// through the member index), else from the home (and a role becomes the new memo). The API
    /// checks each call's declared access with it before the handler runs, so a connection's
    /// calls in one home cost one hashed lookup, not one each.
    /// (The memo's case is inlined into the caller: it is every call's.)
    @inlinable
    public func role(of account: AccountID, in homeID: HomeID, memo: inout MembershipMemo?) -> HomeRole? {
        if let memo, memo.version == membershipVersion, memo.home == homeID, memo.account == account {
            return memo.role
        }
        return roleLookingUp(of: account, in: homeID, memo: &memo)
    }

    @usableFromInline
    func roleLookingUp(of account: AccountID, in homeID: HomeID, memo: inout MembershipMemo?) -> HomeRole? {
        guard let role = readHome(homeID, { $0.members[account] }) ?? nil else { return nil }
        memo = MembershipMemo(account: account, home: homeID, version: membershipVersion, role: role)
        return role
    }

    /// Whether `account` is the server's owner.
    public func isOwner(_ account: AccountID) -> Bool {
        accounts[account]?.isOwner == true
    }

    /// The home's name, for a refusal's message ("" for none).
    public func name(of id: HomeID) -> String {
        readHome(id) { $0.name } ?? ""
    }
}
