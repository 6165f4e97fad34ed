import Foundation
import HomeProto
import HomeService
import SwiftProtobuf
import Testing

@testable import HomeAPI

/// The write's shortcut reads exactly what the generated decoder and the general handler would.
@Suite struct CharacteristicWriteShortcutTests {
    static let values: [CharacteristicValue] = [
        .bool(true), .bool(false), .int(0), .int(1), .int(-1), .int(127), .int(128), .int(300), .int(.min),
        .int(.max), .int(Int64(1) << 62), .float(0), .float(-0.0), .float(1.5), .float(-273.15), .float(.infinity),
        .float(.leastNonzeroMagnitude),
    ]

    static func request(
        _ value: Home_V1_CharacteristicValue
    ) -> (bytes: [UInt8], home: UniqueIdentifier, id: UniqueIdentifier) {
        let home = UniqueIdentifier.random()
        let id = UniqueIdentifier.random()
        var request = Home_V1_WriteCharacteristicRequest()
        request.homeID = Data(home.bytes)
        request.characteristicID = Data(id.bytes)
        request.value = value
        return (try! request.serializedBytes(), home, id)
    }

    @Test(arguments: values)
    func readsWhatTheGeneratedDecoderReads(value: CharacteristicValue) throws {
        let (bytes, home, id) = Self.request(ProtoEncoding.value(value))
        let write = try #require(CharacteristicWrite(asReceived(bytes)))
        #expect(write.home.raw == home && write.characteristic.raw == id)
        let decoded = try Home_V1_WriteCharacteristicRequest(serializedBytes: bytes)
        #expect(write.value == (try ProtoDecoding.value(decoded.value, "value")))
        #expect(write.value == value)
    }

    @Test func leavesEveryOtherShapeToTheGeneratedDecoder() throws {
        var unsigned = Home_V1_CharacteristicValue()
        unsigned.unsignedValue = 5
        var text = Home_V1_CharacteristicValue()
        text.stringValue = "on"
        let (canonical, _, _) = Self.request(ProtoEncoding.value(.int(5)))
        let ids = Array(canonical[..<36])
        let others: [[UInt8]] = [
            Self.request(unsigned).bytes,
            Self.request(text).bytes,
            ids,  // no value
            ids + [0x1A, 0x00],  // an empty value
            ids + [0x1A, 0x02, 0x08, 0x02],  // a bool of 2
            ids + [0x1A, 0x03, 0x10, 0x80, 0x00],  // 0 in two bytes
            ids + [0x1A, 0x03, 0x10, 0x05, 0x00],  // a trailing byte in the value
            ids + [0x1A, 0x02, 0x10, 0x80],  // a varint cut short
            ids + [0x1A, 0x08, 0x21] + Array(repeating: 0, count: 7),  // a double cut short
            ids + [0x1A, 0x02, 0x10, 0x05, 0x20, 0x01],  // an unknown field after the value
            Array(canonical[18..<36] + canonical[..<18] + canonical[36...]),  // ids in the other order
            Array(canonical.dropLast()),  // truncated
        ]
        for bytes in others {
            #expect(CharacteristicWrite(asReceived(bytes)) == nil, "\(bytes)")
        }
    }

    /// Whatever the shortcut accepts, the generated decoder reads as the same request: canonical
    /// writes with a byte changed, and values built from random bytes.
    @Test func acceptsNothingTheGeneratedDecoderReadsDifferently() throws {
        var generator = SystemRandomNumberGenerator()
        var accepted = 0
        for round in 0..<20_000 {
            var bytes = Self.request(ProtoEncoding.value(Self.values[round % Self.values.count])).bytes
            if round % 2 == 0 {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255)
            } else {
                let tag: UInt8 = [0x08, 0x10, 0x21, 0x18][Int.random(in: 0..<4, using: &generator)]
                let body = (0..<Int.random(in: 0...10, using: &generator)).map { _ in UInt8.random(in: 0...255) }
                bytes = Array(bytes[..<36]) + [0x1A, UInt8(1 + body.count), tag] + body
            }
            guard let write = CharacteristicWrite(asReceived(bytes)) else { continue }
            accepted += 1
            let decoded = try Home_V1_WriteCharacteristicRequest(serializedBytes: bytes)
            #expect(Array(decoded.homeID) == write.home.raw.bytes)
            #expect(Array(decoded.characteristicID) == write.characteristic.raw.bytes)
            let value = try ProtoDecoding.value(decoded.value, "value")
            if case .float(let expected) = value, case .float(let read) = write.value {
                #expect(expected.bitPattern == read.bitPattern)
            } else {
                #expect(write.value == value, "\(bytes)")
            }
        }
        #expect(accepted > 5_000)
    }

    @Test(arguments: [Int64(0), 1, 127, 128, 1_764_000_000_000, .max, -1, .min])
    func answersWhatTheGeneratedEncoderWrites(valueTime: Int64) throws {
        var response = Home_V1_WriteCharacteristicResponse()
        response.valueTimeMs = valueTime
        let generated: [UInt8] = try response.serializedBytes()
        #expect(CharacteristicWrite.encodedResponse(valueTime: valueTime) == generated)
    }
}
