import Foundation
import HomeProto
import HomeService
import SwiftProtobuf
import Testing

@testable import HomeAPI

/// The hand-encoded command an accessory receives is byte for byte the generated encoder's.
@Suite struct LinkCommandEncodingTests {
    static let characteristic = CharacteristicID(.random())
    static let actions: [AccessoryLinks.Action] =
        [.identify, .read(characteristic)]
        + [
            .bool(false), .int(0), .int(-70_000), .float(21.5), .string(""),
            .string(String(repeating: "é", count: 100)),
            .data(Array(repeating: 1, count: 200)),
        ].map { .write(characteristic, $0) }

    @Test(arguments: actions.indices)
    func commandBytesAreTheGeneratedEncoders(index: Int) throws {
        let action = Self.actions[index]
        let accessory = AccessoryID(.random())
        for id: UInt64 in [0, 1, 300, .max] {
            for timeout: UInt32 in [0, 5_000, .max] {
                var command = Home_V1_Command()
                command.commandID = id
                command.accessoryID = Data(accessory.raw.bytes)
                command.timeoutMs = timeout
                switch action {
                case .write(let characteristic, let value):
                    command.write = .with {
                        $0.characteristicID = Data(characteristic.raw.bytes)
                        $0.value = ProtoEncoding.value(value)
                    }
                case .read(let characteristic):
                    command.read = .with { $0.characteristicID = Data(characteristic.raw.bytes) }
                case .identify:
                    command.identify = Home_V1_IdentifyCommand()
                }
                let generated: [UInt8] = try Home_V1_LinkMessage.with { $0.command = command }.serializedBytes()
                let encoded = LinkEncoding.command(id, for: accessory, action, timeoutMilliseconds: timeout)
                #expect(encoded == generated, "command \(id), timeout \(timeout), \(action)")
            }
        }
    }
}

/// What the browser shows of an advertisement: each service type once, upper-cased, in the order
/// they first appear, the bridge's own services first.
@Suite struct DiscoveredAccessoryTests {
    @Test func serviceTypesAppearOnceInOrder() {
        let service = { (type: String) in ServiceDescription(type: type, characteristics: []) }
        let lamp = AccessoryDescription(name: "Lamp", services: [service("0000003e-a"), service("0000002B-C")])
        let fan = AccessoryDescription(name: "Fan", services: [service("0000002b-c"), service("00000040-D")])
        let bridge = AccessoryDescription(
            name: "Hub",
            services: [service("0000003E-A")],
            bridgedAccessories: [lamp, fan]
        )
        let discovered = LinkEncoding.discovered(bridge)
        #expect(discovered.serviceTypes == ["0000003E-A", "0000002B-C", "00000040-D"])
        #expect(discovered.bridgedAccessoryNames == ["Lamp", "Fan"])
    }
}
