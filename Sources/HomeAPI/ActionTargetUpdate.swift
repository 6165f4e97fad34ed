import HomeProto
import HomeService
import RPCServer

/// `UpdateActionTargetValue`: what an action of an action set writes. It is the store's durable
/// write with no accessory in the way (the benchmarks measure it beside `WriteCharacteristic`), so
/// the request shape nearly every such call has is read straight from its bytes (see
/// ``RequestBytes``): `home_id` (1), `action_set_id` (2) and `action_id` (3), 16 bytes each, then
/// `target_value` (4) holding one bool, signed integer or double; with an idempotency key or
/// without (the SDK sends one with every mutation). Every other request goes to the generated
/// decoder, and both are answered by ``apply(_:_:_:)`` through ``HomeAPI/answerMutation(_:_:_:_:)``.
struct ActionTargetUpdate: Equatable {
    let home: HomeID
    let actionSet: ActionSetID
    let action: ActionID
    let value: CharacteristicValue

    /// The request read from its bytes, borrowed: an initializer takes its arguments owned, so the
    /// request's slice was retained for it and released in it (two locked operations a call).
    init?(_ bytes: borrowing ArraySlice<UInt8>) {
        guard let home = RequestBytes.leadingID(bytes, field: 1),
            let actionSet = RequestBytes.leadingID(bytes, field: 2),
            let action = RequestBytes.leadingID(bytes, field: 3),
            let value = RequestBytes.trailingValue(bytes, field: 4, after: 3)
        else { return nil }
        self.home = HomeID(home)
        self.actionSet = ActionSetID(actionSet)
        self.action = ActionID(action)
        self.value = value
    }

    /// The generated message's fields, each checked.
    init(_ request: Home_V1_UpdateActionTargetValueRequest) throws(APIFailure) {
        home = try ProtoDecoding.id(request.homeID, "home_id")
        actionSet = try ProtoDecoding.id(request.actionSetID, "action_set_id")
        action = try ProtoDecoding.id(request.actionID, "action_id")
        value = try ProtoDecoding.value(request.targetValue, "target_value")
    }

    /// The shortcut registered with the method: answers the call and returns `true`, or returns
    /// `false` for the general path.
    static func shortcut(_ api: HomeAPI, _ call: ServerCall, _ bytes: ArraySlice<UInt8>) -> Bool {
        guard let request = ActionTargetUpdate(bytes) else { return false }
        api.answerMutation(call, request, bytes, apply)
        return true
    }

    /// Changes the action's target value and answers with its whole action set.
    static func apply(_ api: HomeAPI, _ request: Self, _ caller: Caller) throws(APIFailure) -> [UInt8] {
        let checked = try api.checkedObject(request.actionSet, "action_set_id", in: request.home, caller)
        // Taken here and moved into the encoder: a closure that captured the API to take it had
        // the API retained and released around the store's call.
        var buffer = api.takeAnswerBuffer()
        return try attempt(object: request.action.raw, field: "target_value") { () throws(HomeServiceError) in
            try api.store.updateTargetValue(
                of: request.action,
                in: checked,
                to: request.value,
                as: caller.account,
                answer: { set in
                    var bytes: [UInt8] = []
                    swap(&bytes, &buffer)
                    return ActionSetEncoding.answer(set, into: bytes)
                }
            )
        }
    }
}
