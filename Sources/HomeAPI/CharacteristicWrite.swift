import HomeProto
import HomeService
import RPCServer

/// `WriteCharacteristic`, the API's most frequent change, and the request shape nearly every such
/// call has, read straight from its bytes (as ``CachedReadRequest`` does for reads): swift-protobuf's
/// decoder made two Foundation `Data` objects and a nested message for every write.
///
/// The shortcut accepts only `home_id` (1) and `characteristic_id` (2), 16 bytes each, then `value`
/// (3) holding one bool (`08 00` or `08 01`), one signed integer in its shortest varint, or one double,
/// and nothing else. Every other request goes to the generated decoder and the general handler,
/// which answer it (and its errors) as before.
struct CharacteristicWrite: Equatable {
    let home: HomeID
    let characteristic: CharacteristicID
    let value: CharacteristicValue

    init?(_ bytes: ArraySlice<UInt8>) {
        guard let (home, characteristic) = CachedReadRequest.leadingIDs(bytes) else { return nil }
        let rest = bytes.dropFirst(2 * 18)
        // `1A`, the value's length, then the value message filling the rest.
        guard rest.count >= 3, rest.first == 0x1A, Int(rest[rest.startIndex + 1]) == rest.count - 2,
            let value = Self.value(rest.dropFirst(2))
        else { return nil }
        self.home = home
        self.characteristic = characteristic
        self.value = value
    }

    /// A `home.v1.CharacteristicValue` of exactly one bool, signed or float field.
    private static func value(_ message: ArraySlice<UInt8>) -> CharacteristicValue? {
        guard let tag = message.first else { return nil }
        let payload = message.dropFirst()
        switch tag {
        case 0x08:  // bool_value
            guard payload.count == 1, payload.first! <= 1 else { return nil }
            return .bool(payload.first! == 1)
        case 0x10:  // signed_value
            return shortestVarint(payload).map { .int(Int64(bitPattern: $0)) }
        case 0x21:  // float_value: eight bytes, least significant first
            guard payload.count == 8 else { return nil }
            let bits = payload.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .float(Double(bitPattern: bits))
        default:
            return nil
        }
    }

    /// The varint that is all of `bytes`, if it is written in the fewest bytes (the way every
    /// encoder writes it; a padded one goes to the generated decoder).
    private static func shortestVarint(_ bytes: ArraySlice<UInt8>) -> UInt64? {
        guard let last = bytes.last, (1...10).contains(bytes.count), last & 0x80 == 0,
            last != 0 || bytes.count == 1, bytes.count < 10 || last == 1
        else { return nil }
        var value: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            guard index == bytes.count - 1 || byte & 0x80 != 0 else { return nil }
            value |= UInt64(byte & 0x7F) << (7 * UInt64(index))
        }
        return value
    }

    /// The shortcut registered with the method: answers the call and returns `true`, or returns
    /// `false` for the general path.
    static func shortcut(_ api: HomeAPI, _ call: ServerCall, _ bytes: ArraySlice<UInt8>) -> Bool {
        guard let request = CharacteristicWrite(bytes) else { return false }
        api.answerLater(call, request) { api, call, request, caller throws(APIFailure) in
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
        let characteristic = try attempt(object: id.raw, field: "value") { () throws(HomeServiceError) in
            try api.store.checkWrite(id, value, as: caller.account)
        }
        api.links.forward(.write(id, value), to: characteristic.accessory, deadline: call.deadline) { result in
            // Accepted by the accessory: now the cache, the durable row and the event.
            let (written, ticket) = api.store.write(from: caller.session) { () throws(APIFailure) -> [UInt8] in
                _ = try result.get(object: id.raw)
                let entry = try attempt(object: id.raw) { () throws(HomeServiceError) in
                    try api.store.writeValue(id, value, as: caller.account)
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
