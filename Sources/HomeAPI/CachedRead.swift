import HomeProto
import HomeService
import RPCServer
import RPCServices

/// `ReadCharacteristic` from the cache, the API's most frequent call, and the request shape nearly
/// every such call has, read straight from its bytes (see ``RequestBytes``). The shortcut accepts
/// only the shape a client sends for a cached read: `home_id` (1) and `characteristic_id` (2) of
/// 16 bytes each, `fresh` (3) absent or false, nothing else, every tag and length in one byte.
/// Anything else goes to the generated decoder and the general handler, which answer it (and its
/// errors) as before.
struct CachedReadRequest: Equatable {
    let home: HomeID
    let characteristic: CharacteristicID

    /// The request read from its bytes, borrowed: an initializer takes its arguments owned, so the
    /// request's slice was retained for it and released in it (two locked operations a call).
    init?(_ bytes: borrowing ArraySlice<UInt8>) {
        if let canonical = Self(canonical: bytes) {
            self = canonical
            return
        }
        var home: UniqueIdentifier?
        var characteristic: UniqueIdentifier?
        let span = bytes.span
        var index = 0
        while index < span.count {
            switch span[index] {
            case 0x0A, 0x12:  // fields 1 and 2, length-delimited
                guard index + 18 <= span.count, span[index + 1] == 16 else { return nil }
                let id = RequestBytes.id(in: span.bytes, at: index + 2)
                // A repeated field's last occurrence wins, as in protobuf.
                if span[index] == 0x0A { home = id } else { characteristic = id }
                index += 18
            case 0x18:  // field 3, varint: only `false` stays on the shortcut
                guard index + 2 <= span.count, span[index + 1] == 0 else { return nil }
                index += 2
            default:
                return nil
            }
        }
        guard let home, let characteristic else { return nil }
        self.home = HomeID(home)
        self.characteristic = CharacteristicID(characteristic)
    }

    /// The request as clients nearly always send it, both fields once, in order, and nothing else:
    /// two tag-and-length checks and four loads instead of the field loop.
    private init?(canonical bytes: borrowing ArraySlice<UInt8>) {
        guard bytes.count == 2 * 18, let ids = Self.leadingIDs(bytes) else { return nil }
        (home, characteristic) = ids
    }

    /// `home_id` (1) and `characteristic_id` (2), the leading ids of `bytes` (``RequestBytes``):
    /// the way a cached read and a write name their characteristic.
    static func leadingIDs(_ bytes: ArraySlice<UInt8>) -> (HomeID, CharacteristicID)? {
        guard let home = RequestBytes.leadingID(bytes, field: 1),
            let characteristic = RequestBytes.leadingID(bytes, field: 2)
        else { return nil }
        return (HomeID(home), CharacteristicID(characteristic))
    }

    /// The shortcut registered with the method: answers the call and returns `true`, or returns
    /// `false` for the general path.
    static func shortcut(_ api: HomeAPI, _ call: ServerCall, _ bytes: ArraySlice<UInt8>) -> Bool {
        guard let request = CachedReadRequest(bytes) else { return false }
        api.answerLater(call, request) { api, call, request, caller throws(APIFailure) in
            try answer(api, call, request.characteristic, in: request.home, caller)
        }
        return true
    }

    /// Answers a read from the cache.
    static func answer(
        _ api: HomeAPI,
        _ call: ServerCall,
        _ id: CharacteristicID,
        in home: HomeID,
        _ caller: Caller
    ) throws(APIFailure) {
        do throws(HomeServiceError) {
            let reading = try caller.principal.readValue(id, in: home, from: api.store)
            let valueLength = reading.value.map(ProtoWriter.valueLength) ?? 0
            call.respond(length: responseLength(reading, valueLength: valueLength)) {
                writeResponse(reading, valueLength: valueLength, into: &$0)
            }
        } catch {
            // The lookup's failures name the field, as for every object a request names.
            let lookup = error.code == .notFound || error.code == .objectAssociatedToAnotherHome
            throw APIFailure(error, object: id.raw, field: lookup ? "characteristic_id" : "")
        }
    }

    /// Writes the `home.v1.ReadCharacteristicResponse` for `reading` (``responseLength(_:valueLength:)``
    /// bytes) into the connection's outgoing bytes, encoded by hand (see ``ProtoWriter``): the
    /// generated encoder took about 1,700 instructions for twenty bytes.
    /// - Parameter valueLength: `ProtoWriter.valueLength` of the reading's value, sized once.
    static func writeResponse(
        _ reading: HomeStore.CachedReading,
        valueLength: Int,
        into writer: inout OutputSpan<UInt8>
    ) {
        if let value = reading.value {
            writer.delimited(1, length: valueLength) { $0.value(value) }
        }
        if reading.updatedAt != 0 { writer.varint(2, UInt64(bitPattern: reading.updatedAt)) }
        if reading.isReachable { writer.varint(3, 1) }
    }

    /// Bytes ``writeResponse(_:valueLength:into:)`` writes.
    static func responseLength(_ reading: HomeStore.CachedReading, valueLength: Int) -> Int {
        (reading.value == nil ? 0 : ProtoWriter.delimitedLength(valueLength))
            + (reading.updatedAt != 0 ? ProtoWriter.varintFieldLength(UInt64(bitPattern: reading.updatedAt)) : 0)
            + (reading.isReachable ? 2 : 0)
    }
}
