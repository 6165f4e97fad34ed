@testable import HomeService

/// Everything a store holds, comparable across a reopen (cache slots may differ; values may not).
struct StoreSnapshot: Equatable {
    struct CharacteristicState: Equatable {
        let service: ServiceID
        let type: String
        let properties: CharacteristicProperties
        let metadata: CharacteristicMetadata
        let entry: CharacteristicCache.Entry
    }

    let accounts: [AccountID: Account]
    let homes: [HomeID: Home]
    let rooms: [RoomID: Room]
    let zones: [ZoneID: Zone]
    let accessories: [AccessoryID: Accessory]
    let services: [ServiceID: Service]
    let characteristics: [CharacteristicID: CharacteristicState]
    let serviceGroups: [ServiceGroupID: ServiceGroup]
    let actionSets: [ActionSetID: ActionSet]
    let triggers: [TriggerID: TimerTrigger]

    init(_ store: HomeStore) {
        accounts = store.accounts
        homes = store.homes
        rooms = store.rooms.dictionary
        zones = store.zones.dictionary
        accessories = store.accessories.dictionary
        services = store.services.dictionary
        characteristics = Dictionary(
            uniqueKeysWithValues: store.characteristics.values.map {
                (
                    $0.id,
                    CharacteristicState(
                        service: $0.service,
                        type: $0.type,
                        properties: $0.properties,
                        metadata: $0.metadata,
                        entry: store.cache[$0.slot]
                    )
                )
            }
        )
        serviceGroups = store.serviceGroups.dictionary
        actionSets = store.actionSets.dictionary
        triggers = store.triggers.dictionary
    }
}
