import Foundation
import HomeProto
import HomeService
import SwiftProtobuf
import Testing

@testable import HomeAPI

/// The cached read's shortcut reads and writes exactly what the generated code would.
@Suite struct CachedReadShortcutTests {
    static let values: [CharacteristicValue?] = [
        nil, .bool(true), .bool(false), .int(0), .int(1), .int(-1), .int(300), .int(.min), .int(.max),
        .float(0), .float(-0.0), .float(1.5), .float(-273.15), .float(.infinity), .string(""), .string("héllo"),
        .string(String(repeating: "x", count: 200)), .data([]), .data([0, 1, 0xFF]),
        .data(Array(repeating: 7, count: 300)),
    ]

    @Test(arguments: values)
    func responseBytesAreTheGeneratedEncoders(value: CharacteristicValue?) throws {
        for updatedAt: Int64 in [0, 1, 1_795_000_000_000, -5] {
            for isReachable in [true, false] {
                let reading = HomeStore.CachedReading(
                    entry: CharacteristicCache.Entry(value: value, updatedAt: updatedAt),
                    isReachable: isReachable
                )
                let generated: [UInt8] = try Home_V1_ReadCharacteristicResponse(reading).serializedBytes()
                let valueLength = value.map(ProtoWriter.valueLength) ?? 0
                let length = CachedReadRequest.responseLength(reading, valueLength: valueLength)
                #expect(length == generated.count, "\(reading)")
                // Appended after what the connection already holds.
                var outgoing: [UInt8] = [0xAB, 0xCD]
                outgoing.append(addingCapacity: length) {
                    CachedReadRequest.writeResponse(reading, valueLength: valueLength, into: &$0)
                }
                #expect(outgoing == [0xAB, 0xCD] + generated, "\(reading)")
            }
        }
    }

    @Test func readsTheCommonShapeAsTheGeneratedDecoderDoes() throws {
        let home = UniqueIdentifier.random()
        let characteristic = UniqueIdentifier.random()
        var request = Home_V1_ReadCharacteristicRequest()
        request.homeID = Data(home.bytes)
        request.characteristicID = Data(characteristic.bytes)
        let canonical: [UInt8] = try request.serializedBytes()
        let expected = try #require(CachedReadRequest(asReceived(canonical)))
        #expect(expected.home.raw == home && expected.characteristic.raw == characteristic)
        // Fields in another order, `fresh` sent as false, a field repeated (the last one wins).
        let reordered = Array(canonical[18...] + canonical[..<18])
        #expect(CachedReadRequest(asReceived(reordered)) == expected)
        #expect(CachedReadRequest(asReceived(canonical + [0x18, 0x00])) == expected)
        #expect(CachedReadRequest(asReceived([0x12, 0x10] + Array(repeating: 9, count: 16) + canonical)) == expected)
    }

    @Test func leavesEveryOtherShapeToTheGeneratedDecoder() throws {
        var request = Home_V1_ReadCharacteristicRequest()
        request.homeID = Data(UniqueIdentifier.random().bytes)
        request.characteristicID = Data(UniqueIdentifier.random().bytes)
        let canonical: [UInt8] = try request.serializedBytes()
        let others: [[UInt8]] = [
            [],
            Array(canonical[..<18]),  // no characteristic_id
            canonical + [0x18, 0x01],  // fresh
            canonical + [0x18, 0x80, 0x00],  // fresh = false in a two-byte varint
            canonical + [0x20, 0x01],  // an unknown field
            Array(canonical.dropLast()),  // truncated
            [0x0A, 0x0F] + Array(canonical[2..<17]) + Array(canonical[18...]),  // a 15-byte home_id
            // The canonical length with another second field: field 3 as bytes, field 1 twice.
            Array(canonical[..<18]) + [0x1A] + Array(canonical[19...]),
            Array(canonical[..<18]) + [0x0A] + Array(canonical[19...]),
        ]
        for bytes in others {
            #expect(CachedReadRequest(asReceived(bytes)) == nil, "\(bytes)")
        }
    }

    /// Whatever the shortcut accepts, the generated decoder reads as the same request: messages
    /// built from valid and invalid fields, some with a byte changed.
    @Test func acceptsNothingTheGeneratedDecoderReadsDifferently() throws {
        var generator = SystemRandomNumberGenerator()
        func id() -> [UInt8] { (0..<16).map { _ in UInt8.random(in: 0...255) } }
        var accepted = 0
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                switch Int.random(in: 0..<6, using: &generator) {
                case 0: bytes += [0x0A, 0x10] + id()
                case 1: bytes += [0x12, 0x10] + id()
                case 2: bytes += [0x18, 0x00]
                case 3: bytes += [0x18, 0x01]
                case 4: bytes += [0x12, 0x0F] + id().dropLast()
                default: bytes += (0..<Int.random(in: 1...4, using: &generator)).map { _ in UInt8.random(in: 0...255) }
                }
            }
            if !bytes.isEmpty, Bool.random(using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255)
            }
            guard let shortcut = CachedReadRequest(asReceived(bytes)) else { continue }
            accepted += 1
            let decoded = try Home_V1_ReadCharacteristicRequest(serializedBytes: bytes)
            #expect(!decoded.fresh)
            #expect(Array(decoded.homeID) == shortcut.home.raw.bytes)
            #expect(Array(decoded.characteristicID) == shortcut.characteristic.raw.bytes)
        }
        #expect(accepted > 500)
    }
}
