/// A stored row, named by its key.
enum RecordKey: Hashable {
    case account(AccountID)
    case token(AccessTokenID)
    /// The home's row (its revision changes with every event).
    case home(HomeID)
    /// Every event of a removed home.
    case removedHomeEvents(HomeID)
    case member(HomeID, AccountID)
    case room(RoomID)
    case zone(ZoneID)
    case accessory(AccessoryID)
    /// Only the reachability of an accessory.
    case reachability(AccessoryID)
    case service(ServiceID)
    case characteristicKind(number: Int32)
    case characteristic(CharacteristicID)
    /// Only the cached value of a characteristic.
    case value(CharacteristicID)
    case serviceGroup(ServiceGroupID)
    case actionSet(ActionSetID)
    case trigger(TriggerID)
    /// A row of idempotency records (``IdempotencyRecords``).
    case idempotencyBatch(Int64)
}

extension RecordKey {
    /// Whether a change of this row can change what a characteristic write's check decides
    /// (``HomeStore/writeCheckVersion``). Only rows known to play no part are left out: the
    /// frequent ones (every value write touches its value and its home's revision) and those of
    /// other kinds of object. A row left in by mistake only costs a second check.
    var canChangeWriteChecks: Bool {
        switch self {
        case .value, .home, .idempotencyBatch, .actionSet, .trigger, .serviceGroup, .room, .zone: false
        case .account, .token, .removedHomeEvents, .member, .accessory, .reachability, .service,
            .characteristicKind, .characteristic:
            true
        }
    }

    /// The set of touched rows hashes a key as the identifier tables hash an id (one keyed multiply,
    /// see `UniqueIdentifier._rawHashValue(seed:)`), the case mixed into the seed: the synthesized
    /// hashing ran SipHash over the case and both words of the id, 400 instructions a touch.
    func _rawHashValue(seed: Int) -> Int {
        switch self {
        case .account(let id): return id._rawHashValue(seed: seed &+ 1)
        case .token(let id): return id._rawHashValue(seed: seed &+ 2)
        case .home(let id): return id._rawHashValue(seed: seed &+ 3)
        case .removedHomeEvents(let id): return id._rawHashValue(seed: seed &+ 4)
        case .member(let home, let account): return home._rawHashValue(seed: account._rawHashValue(seed: seed &+ 5))
        case .room(let id): return id._rawHashValue(seed: seed &+ 6)
        case .zone(let id): return id._rawHashValue(seed: seed &+ 7)
        case .accessory(let id): return id._rawHashValue(seed: seed &+ 8)
        case .reachability(let id): return id._rawHashValue(seed: seed &+ 9)
        case .service(let id): return id._rawHashValue(seed: seed &+ 10)
        case .characteristic(let id): return id._rawHashValue(seed: seed &+ 11)
        case .value(let id): return id._rawHashValue(seed: seed &+ 12)
        case .serviceGroup(let id): return id._rawHashValue(seed: seed &+ 13)
        case .actionSet(let id): return id._rawHashValue(seed: seed &+ 14)
        case .trigger(let id): return id._rawHashValue(seed: seed &+ 15)
        case .idempotencyBatch(let row): return row._rawHashValue(seed: seed &+ 16)
        case .characteristicKind:
            // Rare: hashed as the synthesized conformance hashes them.
            var hasher = Hasher()
            hasher.combine(seed)
            hash(into: &hasher)
            return hasher.finalize()
        }
    }
}
