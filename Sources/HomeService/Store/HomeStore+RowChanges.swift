internal import SQLite

/// Turning a touched record into the row change the writer applies: the record's row as it is now,
/// or its deletion when it is gone.
extension HomeStore {
    /// The change that brings `key`'s stored row to the record's state now.
    func storeChange(for key: RecordKey) -> StoreChange {
        switch key {
        case .account(let id):
            return upsertOrDelete(StoreSchema.account, id, accounts[id].map(RowCoding.row))
        case .token(let id):
            return upsertOrDelete(StoreSchema.token, id, tokens[id].map(RowCoding.row))
        case .home(let id):
            return upsertOrDelete(StoreSchema.home, id, homes[id].map(RowCoding.row))
        case .removedHomeEvents(let id):
            return .trimEvents(home: id.raw.bytes, throughRevision: .max)
        case .member(let homeID, let accountID):
            if let role = homes[homeID]?.members[accountID] {
                return .upsert(StoreSchema.member, RowCoding.memberRow(home: homeID, account: accountID, role: role))
            }
            return .delete(StoreSchema.member, key: [.id(homeID), .id(accountID)])
        case .room(let id):
            return upsertOrDelete(StoreSchema.room, id, rooms[id].map(RowCoding.row))
        case .zone(let id):
            return upsertOrDelete(StoreSchema.zone, id, zones[id].map(RowCoding.row))
        case .accessory(let id):
            return upsertOrDelete(StoreSchema.accessory, id, accessories[id].map(RowCoding.row))
        case .reachability(let id):
            guard let accessory = accessories[id] else { return .delete(StoreSchema.accessory, key: [.id(id)]) }
            return .setReachable(accessory: id.raw.bytes, reachable: accessory.isReachable)
        case .service(let id):
            return upsertOrDelete(StoreSchema.service, id, services[id].map(RowCoding.row))
        case .characteristicKind(let number):
            if let kind = characteristicKinds.kind(number: number) {
                return .upsert(StoreSchema.characteristicKind, RowCoding.row(kind))
            }
            return .delete(StoreSchema.characteristicKind, key: [.integer(Int64(number))])
        case .characteristic(let id):
            return upsertOrDelete(
                StoreSchema.characteristic,
                id,
                characteristics[id].map { RowCoding.row($0, cache[$0.slot]) }
            )
        case .value(let id):
            guard let characteristic = characteristics[id] else {
                return .delete(StoreSchema.characteristic, key: [.id(id)])
            }
            let entry = cache[characteristic.slot]
            return .setValue(characteristic: id.raw, value: entry.value, time: entry.updatedAt)
        case .serviceGroup(let id):
            return upsertOrDelete(StoreSchema.serviceGroup, id, serviceGroups[id].map(RowCoding.row))
        case .actionSet(let id):
            return upsertOrDelete(StoreSchema.actionSet, id, actionSets[id].map(RowCoding.row))
        case .trigger(let id):
            return upsertOrDelete(StoreSchema.timerTrigger, id, triggers[id].map(RowCoding.row))
        case .idempotencyBatch(let row):
            return idempotency.rowChange(row)
        }
    }

    private func upsertOrDelete<Kind>(_ table: StoreTable, _ id: ID<Kind>, _ row: [SQLValue]?) -> StoreChange {
        row.map { .upsert(table, $0) } ?? .delete(table, key: [.id(id)])
    }
}
