import Foundation
import HomeProto
import HomeService
import SwiftProtobuf
import Testing

@testable import HomeAPI

/// The hand-encoded value event is byte for byte what the generated encoder makes of the same event.
@Suite struct ValueEventEncodingTests {
    static let values: [CharacteristicValue?] = [
        nil, .bool(false), .bool(true), .int(0), .int(-1), .int(.max), .float(0), .float(-273.15),
        .string(""), .string("héllo"), .string(String(repeating: "x", count: 300)), .data([]), .data([0, 0xFF]),
    ]
    static let initiators: [Initiator] = [
        .account(AccountID.random()), .accessory(AccessoryID.random()), .server,
    ]

    @Test(arguments: values)
    func bytesAreTheGeneratedEncoders(value: CharacteristicValue?) throws {
        for initiator in Self.initiators {
            for (revision, time) in [(UInt64(0), Int64(0)), (1, 1_795_000_000_000), (.max, -5)] {
                for (object, container) in [(UniqueIdentifier?.none, UniqueIdentifier?.none), (.random(), .random())] {
                    for service in [ServiceID?.none, .random()] {
                        for (skipped, own) in [(UInt64(0), false), (3, true), (.max, false)] {
                            let change = HomeChange(
                                home: HomeID.random(),
                                revision: revision,
                                time: time,
                                initiator: initiator,
                                event: ChangeEvent(
                                    .characteristicValueUpdated,
                                    object: object,
                                    container: container,
                                    value: value
                                )
                            )
                            let generated: [UInt8] = try HomeAPI.eventMessage(
                                change,
                                own: own,
                                payload: .characteristicValueUpdated(
                                    HomeAPI.valueUpdate(change.event, service: service, skipped: skipped)
                                )
                            ).serializedBytes()
                            let encoded = ValueEventEncoding.encoded(
                                change,
                                service: service,
                                skipped: skipped,
                                own: own
                            )
                            #expect(
                                encoded == generated,
                                "\(change) service \(String(describing: service)) skipped \(skipped)"
                            )
                        }
                    }
                }
            }
        }
    }
}
