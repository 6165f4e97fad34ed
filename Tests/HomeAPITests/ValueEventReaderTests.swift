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
}
