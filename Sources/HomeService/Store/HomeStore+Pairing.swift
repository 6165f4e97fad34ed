/// Pairing: advertised accessories checked before the browser shows them, added to a home with a
/// credential, and proving themselves with it on every reconnect.
extension HomeStore {
    /// Checks what an accessory advertises, as adding it would (ids, names, the catalog, metadata,
    /// initial values), so the browser only ever shows accessories that can be added.
    /// - Throws: 13 for an id already in a home; 1 for an id used twice; 93, 27, the naming codes,
    ///   46, 43–51.
    public func checkAdvertisement(_ description: AccessoryDescription) throws(HomeServiceError) {
        try AccessoryDescriptionCheck(store: self).check(description)
    }

    /// Checks that `account` may add accessories to the home, before a setup code is compared (so a
    /// caller without the right learns nothing of the code).
    /// - Throws: 2 for a home the account cannot see; 17 for a guest.
    public func checkPairing(into homeID: HomeID, as account: AccountID) throws(HomeServiceError) {
        _ = try home(homeID, for: account, .addAccessory)
    }

    /// Adds an advertised accessory to a home (see ``addAccessory(_:to:as:credentialHash:)``) and
    /// issues its credential.
    /// - Returns: the accessories added (the bridge first) and the credential, which is shown only
    ///   here: the store keeps its SHA-256.
    public func pairAccessory(
        _ description: AccessoryDescription,
        to homeID: HomeID,
        as account: AccountID
    ) throws(HomeServiceError) -> (accessories: [Accessory], credential: String) {
        let credential = TokenGenerator.newToken(prefix: TokenGenerator.credentialPrefix)
        let added = try addAccessory(
            description,
            to: homeID,
            as: account,
            credentialHash: TokenGenerator.hash(credential)
        )
        return (added, credential)
    }

    /// Whether `credential` is the one issued to the top-level accessory `id` (digests compared in
    /// constant time).
    public func isCredentialValid(_ credential: String, for id: AccessoryID) -> Bool {
        guard credential.utf8.count <= 256, let expected = accessories[id]?.credentialHash else { return false }
        return TokenGenerator.constantTimeEqual(expected, TokenGenerator.hash(credential))
    }

    /// The top-level accessory that speaks for `id`: its bridge, or itself.
    public func linkAccessory(of id: AccessoryID) -> AccessoryID? {
        guard let accessory = accessories[id] else { return nil }
        return accessory.bridge ?? accessory.id
    }

    /// The accessories behind a bridge; `nil` for an accessory that is not a bridge.
    public func bridgedAccessories(of id: AccessoryID) -> Set<AccessoryID>? {
        guard let accessory = accessories[id], accessory.isBridge else { return nil }
        return Set(accessory.bridgedAccessories)
    }

    /// The accessory a characteristic belongs to.
    public func accessory(ofCharacteristic id: CharacteristicID) -> AccessoryID? {
        characteristics[id]?.accessory
    }

    /// The error for a request to an accessory no link serves: 4, or 88 behind a bridge.
    public func unreachableError(_ id: AccessoryID) -> HomeServiceError {
        guard let accessory = accessories[id] else { return HomeServiceError(.notFound, "accessory \(id) was removed") }
        return accessory.isBridged
            ? HomeServiceError(
                .bridgedAccessoryNotReachable,
                "bridged accessory \"\(accessory.name)\" is not reachable"
            )
            : HomeServiceError(.accessoryNotReachable, "accessory \"\(accessory.name)\" is not reachable")
    }

    /// The accessory's name, for messages ("" when it is gone).
    public func accessoryName(_ id: AccessoryID) -> String {
        accessories.read(id) { $0.name } ?? ""
    }

    /// Records a value an accessory answered a fresh read with: a change is announced as the
    /// accessory's own; an unchanged value writes nothing.
    /// - Throws: 2 for a characteristic that is gone; 50 for a value its metadata forbids.
    @discardableResult
    public func recordReadValue(
        _ id: CharacteristicID,
        _ value: CharacteristicValue,
        by reporter: AccessoryID
    ) throws(HomeServiceError) -> CharacteristicCache.Entry {
        guard let characteristic = characteristics[id] else {
            throw HomeServiceError(.notFound, "the characteristic \(id) was removed")
        }
        if cache[characteristic.slot].value != value {
            try reportValue(id, value, by: reporter)
        }
        return cache[characteristic.slot]
    }
}
