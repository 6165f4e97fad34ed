import HomeProto
import HomeService
import RPCServer
import RPCServices

/// `ReadCharacteristic` from the cache, the API's most frequent call, and the request shape nearly
/// every such call has, read straight from its bytes.
///
/// swift-protobuf decodes each `bytes` field into a Foundation `Data`, and a 16-byte identifier is
/// too long for `Data`'s inline form: two heap objects per request, whose creation and release
/// cost more than the read itself under callgrind. The shortcut accepts only the shape a client
/// sends for a cached read: `home_id` (1) and `characteristic_id` (2) of 16 bytes each, `fresh` (3)
/// absent or false, nothing else, every tag and length in one byte. Anything else goes to the
/// generated decoder and the general handler, which answer it (and its errors) as before.
struct CachedReadRequest: Equatable {
    let home: HomeID
    let characteristic: CharacteristicID

    init?(_ bytes: [UInt8]) {
        var home: UniqueIdentifier?
        var characteristic: UniqueIdentifier?
        let found = bytes.withUnsafeBytes { raw -> Bool in
            var index = 0
            while index < raw.count {
                switch raw[index] {
                case 0x0A, 0x12:  // fields 1 and 2, length-delimited
                    guard index + 18 <= raw.count, raw[index + 1] == 16 else { return false }
                    let id = UniqueIdentifier(
                        high: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: index + 2, as: UInt64.self)),
                        low: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: index + 10, as: UInt64.self))
                    )
                    // A repeated field's last occurrence wins, as in protobuf.
                    if raw[index] == 0x0A { home = id } else { characteristic = id }
                    index += 18
                case 0x18:  // field 3, varint: only `false` stays on the shortcut
                    guard index + 2 <= raw.count, raw[index + 1] == 0 else { return false }
                    index += 2
                default:
                    return false
                }
            }
            return true
        }
        guard found, let home, let characteristic else { return nil }
        self.home = HomeID(home)
        self.characteristic = CharacteristicID(characteristic)
    }

    /// The shortcut registered with the method: answers the call and returns `true`, or returns
    /// `false` for the general path.
    static func shortcut(_ api: HomeAPI, _ call: ServerCall, _ bytes: [UInt8]) -> Bool {
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
            let reading = try api.store.readValue(id, in: home, as: caller.account)
            call.respond(encodedResponse(reading))
        } catch {
            // The lookup's failures name the field, as for every object a request names.
            let lookup = error.code == .notFound || error.code == .objectAssociatedToAnotherHome
            throw APIFailure(error, object: id.raw, field: lookup ? "characteristic_id" : "")
        }
    }

    /// The `home.v1.ReadCharacteristicResponse` for `reading`, encoded by hand: the generated
    /// encoder sizes and writes the message in two generic passes, a heap-stored message with a
    /// nested one, about 1,700 instructions for twenty bytes. The bytes are the generated
    /// encoder's, field for field (a test compares them over every kind of value).
    static func encodedResponse(_ reading: HomeStore.CachedReading) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32 + (reading.value.map(variableLength) ?? 0))
        if let value = reading.value {
            // Field 1, the value: a message whose one field is the oneof member that is set.
            bytes.append(0x0A)
            appendVarint(UInt64(encodedLength(of: value)), to: &bytes)
            switch value {
            case .bool(let bool):
                bytes.append(0x08)
                bytes.append(bool ? 1 : 0)
            case .int(let int):
                bytes.append(0x10)
                appendVarint(UInt64(bitPattern: int), to: &bytes)
            case .float(let float):
                bytes.append(0x21)
                withUnsafeBytes(of: float.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            case .string(let string):
                bytes.append(0x2A)
                appendVarint(UInt64(string.utf8.count), to: &bytes)
                bytes.append(contentsOf: string.utf8)
            case .data(let data):
                bytes.append(0x32)
                appendVarint(UInt64(data.count), to: &bytes)
                bytes.append(contentsOf: data)
            }
        }
        // Fields 2 (value_time_ms) and 3 (reachable) are left out at their defaults, as proto3 does.
        if reading.updatedAt != 0 {
            bytes.append(0x10)
            appendVarint(UInt64(bitPattern: reading.updatedAt), to: &bytes)
        }
        if reading.isReachable {
            bytes.append(0x18)
            bytes.append(1)
        }
        return bytes
    }

    /// Bytes of the nested `CharacteristicValue` message.
    private static func encodedLength(of value: CharacteristicValue) -> Int {
        switch value {
        case .bool: 2
        case .int(let int): 1 + varintLength(UInt64(bitPattern: int))
        case .float: 9
        case .string, .data: 1 + varintLength(UInt64(variableLength(value))) + variableLength(value)
        }
    }

    /// The length of a string's or data's bytes; 0 for the fixed-size kinds.
    private static func variableLength(_ value: CharacteristicValue) -> Int {
        switch value {
        case .string(let string): string.utf8.count
        case .data(let data): data.count
        case .bool, .int, .float: 0
        }
    }

    private static func varintLength(_ value: UInt64) -> Int {
        // Seven bits per byte; zero takes one byte.
        max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}
