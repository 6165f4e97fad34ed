import Foundation
import HomeProto

/// Reads the integer value of a `home.v1.Event` carrying `characteristic_value_updated`, walking the
/// protobuf fields by hand. A subscriber of the fan-out benchmark receives hundreds of thousands of
/// events a second; decoding each whole with swift-protobuf took 40% of the client's core and made
/// the client, not the server, the limit (its Redis side only splits RESP lines).
enum ValueEventReader {
    /// `Event.characteristic_value_updated`, `CharacteristicValueUpdated.value`, and the integer
    /// fields of `CharacteristicValue` (proto/home/v1/events.proto and model.proto).
    static let valueUpdatedField: UInt64 = 157
    static let valueField: UInt64 = 4
    static let signedValueField: UInt64 = 2
    static let unsignedValueField: UInt64 = 3

    /// The value, or `nil` when the event is malformed or is not an integer value update.
    static func integerValue(in event: [UInt8]) -> UInt64? {
        guard let update = field(valueUpdatedField, in: event[...]),
            let value = field(valueField, in: update)
        else { return nil }
        var reader = ProtoFieldReader(value)
        while let (number, wireType) = reader.nextKey() {
            if wireType == 0, number == signedValueField || number == unsignedValueField {
                return reader.varint()
            }
            guard reader.skip(wireType) else { return nil }
        }
        return nil
    }

    /// What the fleet's subscribers read of a value update.
    struct ValueUpdate {
        var revision: UInt64 = 0
        var characteristicID = Data()
        /// The integer value (unsigned values as their bits), `nil` for a value of another kind.
        var number: Int64?
        var skippedUpdates: UInt64 = 0
    }

    /// A `characteristic_value_updated` event's revision and update, or `nil` for any other event or
    /// malformed bytes (which the caller then decodes whole). The fleet's subscriber gets an event
    /// for every write and report: decoding each with swift-protobuf was a seventh of its loop.
    static func valueUpdate(in event: [UInt8]) -> ValueUpdate? {
        var update = ValueUpdate()
        var reader = ProtoFieldReader(event[...])
        var payload: ArraySlice<UInt8>?
        while let (number, wireType) = reader.nextKey() {
            switch (number, wireType) {
            case (2, 0):
                guard let revision = reader.varint() else { return nil }
                update.revision = revision
            case (valueUpdatedField, 2):
                payload = reader.lengthDelimited()
            case (10..., _):
                return nil  // another payload: the generated decoder's
            default:
                guard reader.skip(wireType) else { return nil }
            }
        }
        guard !reader.isMalformed, let payload else { return nil }
        reader = ProtoFieldReader(payload)
        while let (number, wireType) = reader.nextKey() {
            switch (number, wireType) {
            case (1, 2):
                guard let id = reader.lengthDelimited() else { return nil }
                update.characteristicID = Data(id)
            case (valueField, 2):
                guard let value = reader.lengthDelimited() else { return nil }
                update.number = integer(in: value)
            case (5, 0):
                guard let skipped = reader.varint() else { return nil }
                update.skippedUpdates = skipped
            default:
                guard reader.skip(wireType) else { return nil }
            }
        }
        return reader.isMalformed ? nil : update
    }

    /// The integer in a `CharacteristicValue`'s bytes, if it holds one.
    private static func integer(in value: ArraySlice<UInt8>) -> Int64? {
        var reader = ProtoFieldReader(value)
        var found: Int64?
        while let (number, wireType) = reader.nextKey() {
            if wireType == 0, number == signedValueField || number == unsignedValueField {
                found = reader.varint().map { Int64(bitPattern: $0) }
            } else {
                found = nil
                guard reader.skip(wireType) else { return nil }
            }
        }
        return found
    }

    /// The contents of the last length-delimited field `number` (protobuf merges repeated
    /// occurrences of a message; the benchmark's events have one).
    private static func field(_ number: UInt64, in bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        var reader = ProtoFieldReader(bytes)
        var found: ArraySlice<UInt8>?
        while let (fieldNumber, wireType) = reader.nextKey() {
            if fieldNumber == number, wireType == 2 {
                guard let contents = reader.lengthDelimited() else { return nil }
                found = contents
            } else if !reader.skip(wireType) {
                return nil
            }
        }
        return reader.isMalformed ? nil : found
    }
}
