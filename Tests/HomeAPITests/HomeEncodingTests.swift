import Foundation
import HomeProto
import HomeService
import SwiftProtobuf
import Testing

@testable import HomeAPI

/// A whole home written by ``HomeEncoder`` is byte for byte what the generated encoder makes of
/// ``ProtoEncoding/home(_:caller:includingAccessories:)``: on a home with every kind of field set and
/// left at its default, and in each message that carries a home.
@Suite struct HomeEncodingTests {
    static let lightbulb = "00000043-0000-1000-8000-0026BB765291"
    static let on = "00000025-0000-1000-8000-0026BB765291"
    static let brightness = "00000008-0000-1000-8000-0026BB765291"
    static let outlet = "00000047-0000-1000-8000-0026BB765291"
    static let outletInUse = "00000026-0000-1000-8000-0026BB765291"
    static let windowCovering = "0000008C-0000-1000-8000-0026BB765291"
    static let currentPosition = "0000006D-0000-1000-8000-0026BB765291"
    static let positionState = "00000072-0000-1000-8000-0026BB765291"
    static let targetPosition = "0000007C-0000-1000-8000-0026BB765291"
    static let holdPosition = "0000006F-0000-1000-8000-0026BB765291"
    static let vendorService = "5A1E0001-8F2D-4C7A-9B3E-6D0C1F2A3B4C"

    /// A home with rooms, a zone, a bridge and its bridged accessories, standard and custom
    /// characteristics of every value type (and one without a value), notifications, a linked and
    /// an associated service, an unreachable and a blocked accessory, and the automation and users.
    static func richHome() throws -> (HomeStore, HomeStore.HomeView, AccountID) {
        let store = try HomeStore.open(.memory(InMemoryStorage()), configuration: HomeStore.Configuration())
        let owner = store.owner!.id
        let home = try store.addHome(named: "Home", as: owner)
        let kitchen = try store.addRoom(named: "卧室", to: home.id, as: owner)
        let zone = try store.addZone(named: "Upstairs", to: home.id, as: owner)
        try store.addRoom(kitchen.id, toZone: zone.id, as: owner)
        let custom: (String, CharacteristicMetadata, CharacteristicValue?) -> CharacteristicDescription = {
            CharacteristicDescription(
                type: "5A1E00\($0)-8F2D-4C7A-9B3E-6D0C1F2A3B4C",
                properties: [.readable, .writable, .supportsEventNotification, .hidden, .requiresAuthorizationData],
                metadata: $1,
                value: $2
            )
        }
        let vendor = ServiceDescription(
            type: vendorService,
            name: "Settings",
            isPrimary: false,
            isUserInteractive: false,
            linkedServices: [0],
            characteristics: [
                custom("02", CharacteristicMetadata(format: .string, maxLength: 8, minLength: 4), .string("Blind")),
                custom(
                    "03",
                    CharacteristicMetadata(
                        format: .float,
                        units: "celsius",
                        minimumValue: -10.5,
                        maximumValue: 1e6,
                        stepValue: 0.5,
                        manufacturerDescription: "Setpoint"
                    ),
                    .float(-2.5)
                ),
                custom("04", CharacteristicMetadata(format: .int, validValues: [-3, 0, 2, 1 << 40]), .int(-3)),
                custom("05", CharacteristicMetadata(format: .data), .data([0, 0xFF, 7])),
                custom("06", CharacteristicMetadata(format: .tlv8), .data([])),
                custom("07", CharacteristicMetadata(format: .uint64), .int(Int64.max)),
                custom("08", CharacteristicMetadata(format: .string), .string("")),
            ]
        )
        let blind = AccessoryDescription(
            name: "Blind",
            category: 14,
            manufacturer: "Acme",
            model: "B-1",
            firmwareVersion: "",
            supportsIdentify: false,
            services: [
                ServiceDescription(
                    type: windowCovering,
                    isPrimary: true,
                    characteristics: [
                        CharacteristicDescription(type: currentPosition, value: .int(0)),
                        CharacteristicDescription(type: positionState, value: .int(2)),
                        CharacteristicDescription(type: targetPosition, value: .int(40)),
                        CharacteristicDescription(type: holdPosition),
                    ]
                ),
                vendor,
            ]
        )
        let bulb = { (name: String, category: Int) in
            AccessoryDescription(
                name: name,
                category: category,
                services: [
                    ServiceDescription(
                        type: lightbulb,
                        characteristics: [
                            CharacteristicDescription(type: on, value: .bool(true)),
                            CharacteristicDescription(type: brightness, value: .int(75)),
                        ]
                    )
                ]
            )
        }
        let plug = AccessoryDescription(
            name: "Plug",
            category: 0,
            services: [
                ServiceDescription(
                    type: outlet,
                    characteristics: [
                        CharacteristicDescription(type: on, value: .bool(false)),
                        CharacteristicDescription(type: outletInUse, value: .bool(false)),
                    ]
                )
            ]
        )
        let bridge = AccessoryDescription(
            name: "Bridge",
            category: 2,
            services: [],
            bridgedAccessories: [bulb("Lamp", 5), bulb("Odd Lamp", -7), plug]
        )
        let blindAccessory = try store.addAccessory(blind, to: home.id, as: owner)[0]
        let bridged = try store.addAccessory(bridge, to: home.id, as: owner)
        try store.assignAccessory(blindAccessory.id, to: kitchen.id, as: owner)
        try store.setReachable(blindAccessory.id, true)
        try store.setBlocked(bridged[0].id, true)
        let plugOutlet = bridged[3].services[0]
        try store.updateAssociatedServiceType(plugOutlet, to: lightbulb, as: owner)
        let target = try store.service(blindAccessory.services[0], as: owner).characteristics[2]
        try store.enableNotification(target, true, as: owner)
        try store.reportValue(target, .int(60), by: blindAccessory.id)
        let group = try store.addServiceGroup(named: "Lights", to: home.id, as: owner)
        try store.addService(plugOutlet, toGroup: group.id, as: owner)
        let scene = try store.addActionSet(named: "Evening", to: home.id, as: owner)
        try store.addAction(
            CharacteristicWriteAction(characteristic: target, targetValue: .int(10)),
            to: scene.id,
            as: owner
        )
        let trigger = try store.addTrigger(
            named: "Dusk",
            fireDate: HomeStore.wallClock() / 60_000 * 60_000 + 3_600_000,
            recurrence: TriggerRecurrence(1, .day),
            to: home.id,
            as: owner
        )
        try store.addActionSet(scene.id, toTrigger: trigger.id, as: owner)
        let guest = try store.createAccount(named: "Guest", by: owner)
        try store.addUser(guest.id, to: home.id, role: .guest, as: owner)
        return (store, try store.view(of: home.id, as: owner), owner)
    }

    @Test func aWholeHomeIsTheGeneratedEncodersBytes() throws {
        let (_, view, owner) = try Self.richHome()
        let message = ProtoEncoding.home(view, caller: owner)
        // The home has what the test means it to have.
        #expect(message.accessories.count == 5)
        #expect(message.accessories.contains { $0.blocked } && message.accessories.contains { $0.reachable })
        let generated: [UInt8] = try message.serializedBytes()
        Self.expectSame(HomeEncoder.encode(view, caller: owner), generated)
    }

    @Test func aHomeWithNothingInItIsTheGeneratedEncodersBytes() throws {
        let store = try HomeStore.open(.memory(InMemoryStorage()), configuration: HomeStore.Configuration())
        let owner = store.owner!.id
        let home = try store.addHome(named: "Empty", as: owner)
        let view = try store.view(of: home.id, as: owner)
        let generated: [UInt8] = try ProtoEncoding.home(view, caller: owner).serializedBytes()
        Self.expectSame(HomeEncoder.encode(view, caller: owner), generated)
    }

    @Test func theMessagesThatCarryAHomeAreTheGeneratedEncodersBytes() throws {
        let (_, view, owner) = try Self.richHome()
        let home = ProtoEncoding.home(view, caller: owner)
        let response: [UInt8] = try Home_V1_GetHomeResponse.with { $0.home = home }.serializedBytes()
        Self.expectSame(HomeEncoder.encode(view, caller: owner, in: [([], 1)]), response)
        let starts: [SubscriptionHub.Start] = [.snapshot, .resync(.subscriberTooSlow), .joined(.account(owner))]
        for start in starts {
            let event = SubscriptionHub.stateEvent(view, for: owner, start)
            // Built as the generated code would, with the time the encoder chose.
            var expected = Home_V1_Event()
            expected.homeID = ProtoEncoding.data(view.home.id)
            expected.revision = view.home.revision
            expected.timeMs = try Home_V1_Event(serializedBytes: event).timeMs
            switch start {
            case .after, .snapshot: expected.snapshot = .with { $0.home = home }
            case .resync(let reason):
                expected.resync = .with {
                    $0.reason = reason
                    $0.home = home
                }
            case .joined(let initiator):
                expected.initiator = HomeAPI.initiator(initiator, in: view.home.id)
                expected.homeAdded = .with { $0.home = home }
            }
            Self.expectSame(event, try expected.serializedBytes(), "\(start)")
        }
    }

    /// Expects equal bytes, and names the first that differs rather than printing both (kilobytes).
    static func expectSame(
        _ encoded: [UInt8],
        _ generated: [UInt8],
        _ what: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let differs =
            zip(encoded, generated).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(encoded.count, generated.count)
        let same = encoded == generated
        #expect(
            same,
            "\(what) \(encoded.count) bytes against the generated \(generated.count): first difference at byte \(differs)",
            sourceLocation: sourceLocation
        )
    }
}
