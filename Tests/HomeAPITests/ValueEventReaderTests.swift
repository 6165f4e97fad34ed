import Foundation
import HomeProto
import SwiftProtobuf
import Testing

@testable import LoadGen

/// The fan-out client's hand-written reading of a value event agrees with swift-protobuf's.
@Suite struct ValueEventReaderTests {
    private static func event(_ value: Home_V1_CharacteristicValue, skipped: UInt64 = 0) -> [UInt8] {
        var event = Home_V1_Event()
        event.homeID = Data(repeating: 1, count: 16)
        event.revision = 99
        event.timeMs = 1_700_000_000_000
        event.initiator = .with { $0.userID = Data(repeating: 2, count: 16) }
        event.characteristicValueUpdated = .with {
            $0.characteristicID = Data(repeating: 3, count: 16)
            $0.serviceID = Data(repeating: 4, count: 16)
            $0.accessoryID = Data(repeating: 5, count: 16)
            $0.value = value
            $0.skippedUpdates = skipped
        }
        return try! event.serializedBytes()
    }

    @Test(arguments: [UInt64(0), 1, 127, 128, 300, 1 << 35, UInt64.max])
    func readsAnUnsignedValue(_ number: UInt64) {
        #expect(ValueEventReader.integerValue(in: Self.event(.with { $0.unsignedValue = number })) == number)
    }

    @Test(arguments: [Int64(0), 1, 65_535, Int64.max])
    func readsASignedValue(_ number: Int64) {
        let bytes = Self.event(.with { $0.signedValue = number }, skipped: 7)
        #expect(ValueEventReader.integerValue(in: bytes) == UInt64(number))
    }

    @Test func refusesWhatIsNotAnIntegerValueUpdate() throws {
        #expect(ValueEventReader.integerValue(in: Self.event(.with { $0.boolValue = true })) == nil)
        #expect(ValueEventReader.integerValue(in: Self.event(.with { $0.floatValue = 2.5 })) == nil)
        var renamed = Home_V1_Event()
        renamed.revision = 3
        renamed.homeNameUpdated = .with { $0.name = "Hall" }
        #expect(ValueEventReader.integerValue(in: try renamed.serializedBytes()) == nil)
        #expect(ValueEventReader.integerValue(in: []) == nil)
    }

    @Test func refusesEveryTruncation() {
        let bytes = Self.event(.with { $0.unsignedValue = 1 << 40 })
        for length in 0..<bytes.count {
            let prefix = Array(bytes[..<length])
            // A cut may fall between whole fields of the event before the update: then the update is
            // simply absent. Never a wrong value.
            let read = ValueEventReader.integerValue(in: prefix)
            #expect(read == nil || read == 1 << 40, "prefix of \(length) bytes read \(String(describing: read))")
        }
    }

    /// The fleet's reading: revision, characteristic, integer and skipped count, as swift-protobuf
    /// decodes them; any other event is left to it.
    @Test func readsTheFleetsValueUpdateAsTheGeneratedDecoderDoes() throws {
        let values: [Home_V1_CharacteristicValue] = [
            .with { $0.unsignedValue = 1 << 31 | 5 }, .with { $0.signedValue = -4 }, .with { $0.boolValue = true },
            Home_V1_CharacteristicValue(),
        ]
        for value in values {
            let bytes = Self.event(value, skipped: 3)
            let expected = try Home_V1_Event(serializedBytes: bytes).characteristicValueUpdated
            let update = try #require(ValueEventReader.valueUpdate(in: bytes))
            #expect(update.revision == 99)
            #expect(update.characteristicID == expected.characteristicID)
            #expect(update.skippedUpdates == expected.skippedUpdates)
            let number: Int64? =
                switch expected.value.kind {
                case .signedValue(let signed)?: signed
                case .unsignedValue(let unsigned)?: Int64(bitPattern: unsigned)
                default: nil
                }
            #expect(update.number == number)
        }
        var resync = Home_V1_Event()
        resync.revision = 7
        resync.resync = Home_V1_Resync()
        #expect(ValueEventReader.valueUpdate(in: try resync.serializedBytes()) == nil)
        let bytes = Self.event(.with { $0.unsignedValue = 9 })
        for length in 0..<bytes.count where ValueEventReader.valueUpdate(in: Array(bytes[..<length])) != nil {
            // A cut between whole fields leaves a shorter update, never a wrong one.
            #expect(ValueEventReader.valueUpdate(in: Array(bytes[..<length]))?.number ?? 9 == 9)
        }
    }
}
