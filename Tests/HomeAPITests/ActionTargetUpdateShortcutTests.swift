import Foundation
import HomeProto
import HomeService
import SwiftProtobuf
import Testing

@testable import HomeAPI

/// The store write's shortcut reads exactly what the generated decoder and the general handler
/// would.
@Suite struct ActionTargetUpdateShortcutTests {
    static func request(_ value: Home_V1_CharacteristicValue) -> [UInt8] {
        var request = Home_V1_UpdateActionTargetValueRequest()
        request.homeID = Data(UniqueIdentifier.random().bytes)
        request.actionSetID = Data(UniqueIdentifier.random().bytes)
        request.actionID = Data(UniqueIdentifier.random().bytes)
        request.targetValue = value
        return try! request.serializedBytes()
    }

    @Test(arguments: CharacteristicWriteShortcutTests.values)
    func readsWhatTheGeneratedDecoderReads(value: CharacteristicValue) throws {
        let bytes = Self.request(ProtoEncoding.value(value))
        let update = try #require(ActionTargetUpdate(asReceived(bytes)))
        #expect(update == (try ActionTargetUpdate(Home_V1_UpdateActionTargetValueRequest(serializedBytes: bytes))))
        #expect(update.value == value)
    }

    @Test func leavesEveryOtherShapeToTheGeneratedDecoder() throws {
        var text = Home_V1_CharacteristicValue()
        text.stringValue = "on"
        let canonical = Self.request(ProtoEncoding.value(.int(5)))
        let ids = Array(canonical[..<54])
        let others: [[UInt8]] = [
            Self.request(text),
            ids,  // no value
            ids + [0x22, 0x00],  // an empty value
            ids + [0x1A, 0x02, 0x10, 0x05],  // the value in field 3
            ids + [0x22, 0x02, 0x10, 0x05, 0x28, 0x01],  // an unknown field after the value
            Array(canonical[..<18] + canonical[36..<54] + canonical[18..<36] + canonical[54...]),  // ids reordered
            Array(canonical[..<36] + canonical[54...]),  // no action id
            Array(canonical.dropLast()),  // truncated
        ]
        for bytes in others {
            #expect(ActionTargetUpdate(asReceived(bytes)) == nil, "\(bytes)")
        }
    }

    /// Whatever the shortcut accepts, the generated decoder reads as the same request: canonical
    /// requests with a byte changed.
    @Test func acceptsNothingTheGeneratedDecoderReadsDifferently() throws {
        var generator = SystemRandomNumberGenerator()
        let values = CharacteristicWriteShortcutTests.values
        var accepted = 0
        for round in 0..<20_000 {
            var bytes = Self.request(ProtoEncoding.value(values[round % values.count]))
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255)
            guard let update = ActionTargetUpdate(asReceived(bytes)) else { continue }
            accepted += 1
            let decoded = try ActionTargetUpdate(Home_V1_UpdateActionTargetValueRequest(serializedBytes: bytes))
            #expect(update.home == decoded.home && update.actionSet == decoded.actionSet)
            #expect(update.action == decoded.action)
            if case .float(let expected) = decoded.value, case .float(let read) = update.value {
                #expect(expected.bitPattern == read.bitPattern)
            } else {
                #expect(update.value == decoded.value, "\(bytes)")
            }
        }
        #expect(accepted > 5_000)
    }
}
