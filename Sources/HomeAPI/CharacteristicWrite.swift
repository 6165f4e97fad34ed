import HomeProto
import HomeService
import RPCServer

/// `WriteCharacteristic`, the API's most frequent change, and the request shape nearly every such
/// call has, read straight from its bytes (see ``RequestBytes``).
///
/// The shortcut accepts only `home_id` (1) and `characteristic_id` (2), 16 bytes each, then `value`
/// (3) holding one bool (`08 00` or `08 01`), one signed integer in its shortest varint, or one double,
/// and nothing else. Every other request goes to the generated decoder and the general handler,
/// which answer it (and its errors) as before.
struct CharacteristicWrite: Equatable {
    let home: HomeID
    let characteristic: CharacteristicID
    let value: CharacteristicValue

    /// The request read from its bytes, borrowed: an initializer takes its arguments owned, so the
    /// request's slice was retained for it and released in it (two locked operations a call).
    init?(_ bytes: borrowing ArraySlice<UInt8>) {
        guard let (home, characteristic) = CachedReadRequest.leadingIDs(bytes),
            let value = RequestBytes.trailingValue(bytes, field: 3, after: 2)
        else { return nil }
        self.home = home
        self.characteristic = characteristic
        self.value = value
    }

    /// The shortcut registered with the method: answers the call and returns `true`, or returns
    /// `false` for the general path.
    static func shortcut(_ api: HomeAPI, _ call: ServerCall, _ bytes: ArraySlice<UInt8>) -> Bool {
        guard let request = CharacteristicWrite(bytes) else { return false }
        api.answerLater(call) { api, call, caller throws(APIFailure) in
            let id = try api.object(request.characteristic, "characteristic_id", in: request.home, caller)
            try forward(api, call, id, request.value, caller)
        }
        return true
    }

    /// Checks the write, forwards it to the accessory and, once the accessory accepted it, makes
    /// it the cached value, durable, and answers.
    static func forward(
        _ api: HomeAPI,
        _ call: ServerCall,
        _ id: CharacteristicID,
        _ value: CharacteristicValue,
        _ caller: Caller
    ) throws(APIFailure) {
        let checked = try attempt(object: id.raw, field: "value") { () throws(HomeServiceError) in
            try api.store.checkWrite(id, value, as: caller.account)
        }
        api.links.forward(.write(id, value), to: checked.characteristic.accessory, deadline: call.deadline) { result in
            // Accepted by the accessory: now the cache, the durable row and the event.
            let (written, ticket) = api.store.write(from: caller.session) { () throws(APIFailure) -> [UInt8] in
                _ = try result.get(object: id.raw)
                let entry = try attempt(object: id.raw) { () throws(HomeServiceError) in
                    try api.store.writeValue(checked)
                }
                return encodedResponse(valueTime: entry.updatedAt)
            }
            api.reply(call, with: Outcome(encoded: written), after: ticket)
        }
    }

    /// A `home.v1.WriteCharacteristicResponse`, encoded by hand (see ``ProtoWriter``): the generated
    /// encoder, reached through generic code, took about 900 instructions for these few bytes.
    static func encodedResponse(valueTime: Int64) -> [UInt8] {
        guard valueTime != 0 else { return [] }
        let time = UInt64(bitPattern: valueTime)
        return ProtoWriter.message(length: ProtoWriter.varintFieldLength(time)) { $0.varint(1, time) }
    }
}
