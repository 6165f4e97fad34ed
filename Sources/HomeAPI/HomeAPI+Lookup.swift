import Foundation
import HomeProto
import HomeService

/// Request fields to checked domain values, and domain objects to messages, for the handlers.
extension HomeAPI {
    /// The home a request names (its rights are checked by the operation itself).
    func homeID(_ data: Data) throws(APIFailure) -> HomeID {
        try ProtoDecoding.id(data, "home_id")
    }

    /// An object the request names, checked to be in the named home: 2 if it is not there (or the
    /// home is not the caller's to see), 11 if it is in another home of the caller's.
    func object<Kind: HomeScopedKind>(
        _ data: Data,
        _ field: String,
        in home: HomeID,
        _ caller: Caller
    ) throws(APIFailure) -> ID<Kind> {
        try object(ProtoDecoding.id(data, field), field, in: home, caller)
    }

    /// ``object(_:_:in:_:)`` for an identifier already read.
    func object<Kind: HomeScopedKind>(
        _ id: ID<Kind>,
        _ field: String,
        in home: HomeID,
        _ caller: Caller
    ) throws(APIFailure) -> ID<Kind> {
        _ = try checkedObject(id, field, in: home, caller)
        return id
    }

    /// ``object(_:_:in:_:)`` for a mutation that takes what the check found (``CheckedObject``).
    func checkedObject<Kind: HomeScopedKind>(
        _ id: ID<Kind>,
        _ field: String,
        in home: HomeID,
        _ caller: Caller
    ) throws(APIFailure) -> CheckedObject<Kind> {
        try attempt(object: id.raw, field: field) { () throws(HomeServiceError) in
            try store.checkObject(id, isIn: home, as: caller.account)
        }
    }

    /// An account a request names.
    func accountID(_ data: Data, _ field: String = "account_id") throws(APIFailure) -> AccountID {
        try ProtoDecoding.id(data, field)
    }

    func roomMessage(_ id: RoomID, _ caller: Caller) throws(APIFailure) -> Home_V1_Room {
        let (room, accessories) = try attempt(object: id.raw) { () throws(HomeServiceError) in
            (try store.room(id, as: caller.account), try store.accessories(inRoom: id, as: caller.account))
        }
        return ProtoEncoding.room(room, accessories: accessories)
    }

    func zoneMessage(_ id: ZoneID, _ caller: Caller) throws(APIFailure) -> Home_V1_Zone {
        ProtoEncoding.zone(
            try attempt(object: id.raw) { () throws(HomeServiceError) in try store.zone(id, as: caller.account) }
        )
    }

    func characteristicState(_ id: CharacteristicID, _ caller: Caller) -> HomeStore.CharacteristicState? {
        try? store.characteristicState(id, as: caller.account)
    }

    func serviceMessage(_ id: ServiceID, _ caller: Caller) throws(APIFailure) -> Home_V1_Service {
        let service = try attempt(object: id.raw) { () throws(HomeServiceError) in
            try store.service(id, as: caller.account)
        }
        return ProtoEncoding.service(service) { characteristicState($0, caller) }
    }

    func accessoryMessage(_ id: AccessoryID, _ caller: Caller) throws(APIFailure) -> Home_V1_Accessory {
        let accessory = try attempt(object: id.raw) { () throws(HomeServiceError) in
            try store.accessory(id, as: caller.account)
        }
        return ProtoEncoding.accessory(
            accessory,
            services: { try? store.service($0, as: caller.account) },
            characteristics: { characteristicState($0, caller) }
        )
    }

    func serviceGroupMessage(_ id: ServiceGroupID, _ caller: Caller) throws(APIFailure) -> Home_V1_ServiceGroup {
        ProtoEncoding.serviceGroup(
            try attempt(object: id.raw) { () throws(HomeServiceError) in try store.serviceGroup(id, as: caller.account)
            }
        )
    }

    func actionSetMessage(_ id: ActionSetID, _ caller: Caller) throws(APIFailure) -> Home_V1_ActionSet {
        ProtoEncoding.actionSet(try actionSet(id, caller))
    }

    /// The action set as the only field (1, `action_set`) of the answer to a change of it.
    func actionSetAnswer(_ id: ActionSetID, _ caller: Caller) throws(APIFailure) -> [UInt8] {
        ActionSetEncoding.answer(try actionSet(id, caller))
    }

    private func actionSet(_ id: ActionSetID, _ caller: Caller) throws(APIFailure) -> ActionSet {
        try attempt(object: id.raw) { () throws(HomeServiceError) in try store.actionSet(id, as: caller.account) }
    }

    func triggerMessage(_ id: TriggerID, _ caller: Caller) throws(APIFailure) -> Home_V1_TimerTrigger {
        ProtoEncoding.trigger(
            try attempt(object: id.raw) { () throws(HomeServiceError) in try store.trigger(id, as: caller.account) }
        )
    }

    func userMessage(_ account: AccountID, in home: HomeID, _ caller: Caller) throws(APIFailure) -> Home_V1_User {
        let users = try attempt { () throws(HomeServiceError) in try store.users(in: home, as: caller.account) }
        guard let user = users.first(where: { $0.account == account }) else {
            throw APIFailure(HomeServiceError(.notFound, "no such user in the home"), field: "user_id")
        }
        return ProtoEncoding.user(user)
    }

    func homeSummary(_ home: Home, _ caller: Caller) -> Home_V1_Home {
        ProtoEncoding.home(
            home,
            caller: caller.account,
            role: home.members[caller.account] ?? .guest,
            primary: store.isPrimaryHome(home.id, for: caller.account),
            revision: home.revision
        )
    }
}
