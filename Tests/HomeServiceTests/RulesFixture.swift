import Testing

@testable import HomeService

/// A home with one of everything, for exercising the rules through the store.
final class RulesFixture {
    let harness: StoreHarness
    var store: HomeStore { harness.store }
    var owner: AccountID { harness.owner }
    let home: Home
    let kitchen: Room
    let upstairs: Zone
    let lamp: Accessory
    let sensor: Accessory
    let bridge: Accessory
    let porch: Accessory
    let custom: Accessory
    let evening: ActionSet
    let lampOn: CharacteristicWriteAction

    static let customService = "9A1B0000-0000-4000-8000-00000000AA01"
    static let customText = "9A1B0000-0000-4000-8000-00000000AA02"
    static let customLevel = "9A1B0000-0000-4000-8000-00000000AA03"

    init(_ kind: StoreKind) throws {
        harness = try StoreHarness(kind)
        let store = harness.store
        let owner = harness.owner
        home = try store.addHome(named: "Home 1", as: owner)
        kitchen = try store.addRoom(named: "Kitchen", to: home.id, as: owner)
        upstairs = try store.addZone(named: "Upstairs", to: home.id, as: owner)
        lamp = try store.addAccessory(Accessories.bulb("Lamp"), to: home.id, as: owner)[0]
        sensor = try store.addAccessory(Accessories.sensor("Thermometer"), to: home.id, as: owner)[0]
        let bridged = try store.addAccessory(
            Accessories.bridge("Hub", behind: [Accessories.bulb("Porch")]),
            to: home.id,
            as: owner
        )
        (bridge, porch) = (bridged[0], bridged[1])
        custom = try store.addAccessory(
            AccessoryDescription(
                name: "Gadget",
                services: [
                    ServiceDescription(
                        type: Self.customService,
                        name: "Gadget Control",
                        characteristics: [
                            CharacteristicDescription(
                                type: Self.customText,
                                properties: [.readable, .writable],
                                metadata: CharacteristicMetadata(format: .string, maxLength: 5, minLength: 2)
                            ),
                            CharacteristicDescription(
                                type: Self.customLevel,
                                properties: [.readable, .writable],
                                metadata: CharacteristicMetadata(
                                    format: .float,
                                    minimumValue: 0,
                                    maximumValue: 10,
                                    stepValue: 0.5
                                )
                            ),
                            CharacteristicDescription(type: Accessories.identify),
                        ]
                    )
                ]
            ),
            to: home.id,
            as: owner
        )[0]
        evening = try store.addActionSet(named: "Evening", to: home.id, as: owner)
        lampOn = CharacteristicWriteAction(
            characteristic: store.characteristic(ofType: Accessories.on, on: lamp.id).id,
            targetValue: .bool(true)
        )
        try store.addAction(lampOn, to: evening.id, as: owner)
    }

    func characteristic(_ type: String, on accessory: Accessory) -> CharacteristicID {
        store.characteristic(ofType: type, on: accessory.id).id
    }

    var now: Int64 { harness.clock.now }

    /// A trigger named "Dusk"; `recurrence` in seconds.
    func trigger(fireDate: Int64? = nil, recurrence: Int64? = nil) throws -> TimerTrigger {
        try store.addTrigger(
            named: "Dusk",
            fireDate: fireDate ?? now + 3_600_000,
            recurrence: recurrence.map { TriggerRecurrence($0, .second) },
            to: home.id,
            as: owner
        )
    }
}

/// One rule, one input, the code HomeKit answers (or `nil` for success).
struct RuleCase: Sendable, CustomTestStringConvertible {
    let name: String
    let expected: HomeKitErrorCode?
    /// Prepares what the rule needs and returns the operation under test.
    let staged: @Sendable (RulesFixture) throws -> () throws -> Void

    /// A case whose operation needs no preparation.
    init(_ name: String, _ expected: HomeKitErrorCode?, _ body: @escaping @Sendable (RulesFixture) throws -> Void) {
        self.init(name, expected, staged: { fixture in { try body(fixture) } })
    }

    init(
        _ name: String,
        _ expected: HomeKitErrorCode?,
        staged: @escaping @Sendable (RulesFixture) throws -> () throws -> Void
    ) {
        self.name = name
        self.expected = expected
        self.staged = staged
    }

    var testDescription: String { "\(name) → \(expected.map { "\($0.rawValue)" } ?? "ok")" }
}
