import Testing

@testable import HomeService

@Suite struct StoreRulesTests {
    static let week: Int64 = 7 * 24 * 3600
    static let minute: Int64 = 60_000

    static let namingCases: [RuleCase] = [
        RuleCase("room Kid's Night Light", nil) {
            _ = try $0.store.addRoom(named: "Kid's Night Light", to: $0.home.id, as: $0.owner)
        },
        RuleCase("room 卧室", nil) { _ = try $0.store.addRoom(named: "卧室", to: $0.home.id, as: $0.owner) },
        RuleCase("room 厨房", nil) { _ = try $0.store.addRoom(named: "厨房", to: $0.home.id, as: $0.owner) },
        RuleCase("accessory Garage 1 Opener", nil) { (f: RulesFixture) throws -> Void in
            _ = try f.store.addAccessory(Accessories.bulb("Garage 1 Opener"), to: f.home.id, as: f.owner)
        },
        RuleCase("home home1 beside Home 1", .homeWithSimilarNameExists) {
            _ = try $0.store.addHome(named: "home1", as: $0.owner)
        },
        RuleCase("home Home 2", nil) { _ = try $0.store.addHome(named: "Home 2", as: $0.owner) },
        RuleCase("room kitchen", .objectWithSimilarNameExistsInHome) {
            _ = try $0.store.addRoom(named: "kitchen", to: $0.home.id, as: $0.owner)
        },
        RuleCase("room Kit chen", .objectWithSimilarNameExistsInHome) {
            _ = try $0.store.addRoom(named: "Kit chen", to: $0.home.id, as: $0.owner)
        },
        RuleCase("room Kitch'en", .objectWithSimilarNameExistsInHome) {
            _ = try $0.store.addRoom(named: "Kitch'en", to: $0.home.id, as: $0.owner)
        },
        RuleCase("room named like the home", .objectWithSimilarNameExistsInHome) {
            _ = try $0.store.addRoom(named: "HOME1", to: $0.home.id, as: $0.owner)
        },
        RuleCase("zone named like a room", .objectWithSimilarNameExistsInHome) {
            _ = try $0.store.addZone(named: "Kitchen", to: $0.home.id, as: $0.owner)
        },
        RuleCase("action set named like an accessory", .objectWithSimilarNameExistsInHome) {
            _ = try $0.store.addActionSet(named: "lamp", to: $0.home.id, as: $0.owner)
        },
        RuleCase("service group named like the default room", .objectWithSimilarNameExistsInHome) {
            _ = try $0.store.addServiceGroup(named: "Default Room", to: $0.home.id, as: $0.owner)
        },
        RuleCase("room Room!", .nameContainsProhibitedCharacters) {
            _ = try $0.store.addRoom(named: "Room!", to: $0.home.id, as: $0.owner)
        },
        RuleCase("room Living-room", .nameContainsProhibitedCharacters) {
            _ = try $0.store.addRoom(named: "Living-room", to: $0.home.id, as: $0.owner)
        },
        RuleCase("room starting with a space", .nameDoesNotStartWithValidCharacters) {
            _ = try $0.store.addRoom(named: " Den", to: $0.home.id, as: $0.owner)
        },
        RuleCase("room starting with an apostrophe", .nameDoesNotStartWithValidCharacters) {
            _ = try $0.store.addRoom(named: "'Den", to: $0.home.id, as: $0.owner)
        },
        RuleCase("room ending with a space", .nameDoesNotEndWithValidCharacters) {
            _ = try $0.store.addRoom(named: "Den ", to: $0.home.id, as: $0.owner)
        },
        RuleCase("room ending with an apostrophe", .nameDoesNotEndWithValidCharacters) {
            _ = try $0.store.addRoom(named: "Dens'", to: $0.home.id, as: $0.owner)
        },
        RuleCase("empty room name", .invalidParameter) {
            _ = try $0.store.addRoom(named: "", to: $0.home.id, as: $0.owner)
        },
        RuleCase("rename room to KITCHEN", .renameWithSimilarName) {
            try $0.store.renameRoom($0.kitchen.id, to: "KITCHEN", as: $0.owner)
        },
        RuleCase("rename room to Upstairs", .objectWithSimilarNameExistsInHome) {
            try $0.store.renameRoom($0.kitchen.id, to: "Upstairs", as: $0.owner)
        },
        RuleCase("rename room to 厨房", nil) { try $0.store.renameRoom($0.kitchen.id, to: "厨房", as: $0.owner) },
        RuleCase("rename home to home1", .renameWithSimilarName) {
            try $0.store.renameHome($0.home.id, to: "home1", as: $0.owner)
        },
        RuleCase("rename home to Kitchen", .objectWithSimilarNameExistsInHome) {
            try $0.store.renameHome($0.home.id, to: "Kitchen", as: $0.owner)
        },
        RuleCase(
            "rename home beside another home",
            .homeWithSimilarNameExists,
            staged: { f in
                _ = try f.store.addHome(named: "Cabin", as: f.owner)
                return { try f.store.renameHome(f.home.id, to: "cabin", as: f.owner) }
            }
        ),
        RuleCase("rename accessory to Thermometer", .objectWithSimilarNameExistsInHome) {
            try $0.store.renameAccessory($0.lamp.id, to: "Thermometer", as: $0.owner)
        },
        RuleCase("rename zone to upstairs", .renameWithSimilarName) {
            try $0.store.renameZone($0.upstairs.id, to: "up stairs", as: $0.owner)
        },
        RuleCase("rename service to another service's name", .objectWithSimilarNameExistsInHome) {
            try $0.store.renameService($0.lamp.services[0], to: "Gadget Control", as: $0.owner)
        },
        RuleCase("rename service to its accessory's name", .renameWithSimilarName) {
            try $0.store.renameService($0.lamp.services[0], to: "Lamp", as: $0.owner)
        },
        RuleCase("rename action set to Good Night", .objectWithSimilarNameExistsInHome) {
            try $0.store.renameActionSet($0.evening.id, to: "Good Night", as: $0.owner)
        },
    ]

    static let accessoryCases: [RuleCase] = [
        RuleCase("rename the room for the entire home", .roomForHomeCannotBeUpdated) {
            try $0.store.renameRoom($0.home.roomForEntireHome, to: "Everywhere", as: $0.owner)
        },
        RuleCase("remove the room for the entire home", .roomForHomeCannotBeUpdated) {
            try $0.store.removeRoom($0.home.roomForEntireHome, as: $0.owner)
        },
        RuleCase("room for the entire home in a zone", .roomForHomeCannotBeInZone) {
            try $0.store.addRoom($0.home.roomForEntireHome, toZone: $0.upstairs.id, as: $0.owner)
        },
        RuleCase(
            "room in a zone twice",
            .alreadyExists,
            staged: { f in
                try f.store.addRoom(f.kitchen.id, toZone: f.upstairs.id, as: f.owner)
                return { try f.store.addRoom(f.kitchen.id, toZone: f.upstairs.id, as: f.owner) }
            }
        ),
        RuleCase("remove a bridged accessory", .cannotRemoveNonBridgeAccessory) {
            try $0.store.removeAccessory($0.porch.id, as: $0.owner)
        },
        RuleCase("remove a bridge", nil) { try $0.store.removeAccessory($0.bridge.id, as: $0.owner) },
        RuleCase("unblock a lamp", .cannotUnblockNonBridgeAccessory) {
            try $0.store.unblockAccessory($0.lamp.id, as: $0.owner)
        },
        RuleCase("unblock a bridge", nil) { (f: RulesFixture) throws -> Void in
            try f.store.setBlocked(f.bridge.id, true)
            try f.store.unblockAccessory(f.bridge.id, as: f.owner)
            try f.store.writeValue(f.characteristic(Accessories.on, on: f.porch), .bool(true), as: f.owner)
        },
        RuleCase(
            "write to a blocked accessory",
            .accessoryIsBlocked,
            staged: { f in
                try f.store.setBlocked(f.lamp.id, true)
                return {
                    try f.store.writeValue(f.characteristic(Accessories.on, on: f.lamp), .bool(true), as: f.owner)
                }
            }
        ),
        RuleCase(
            "read from a blocked accessory",
            .accessoryIsBlocked,
            staged: { f in
                try f.store.setBlocked(f.lamp.id, true)
                return { _ = try f.store.readValue(f.characteristic(Accessories.on, on: f.lamp), as: f.owner) }
            }
        ),
        RuleCase(
            "write behind a blocked bridge",
            .accessoryIsBlocked,
            staged: { f in
                try f.store.setBlocked(f.bridge.id, true)
                return {
                    try f.store.writeValue(f.characteristic(Accessories.on, on: f.porch), .bool(true), as: f.owner)
                }
            }
        ),
        RuleCase(
            "identify a blocked accessory",
            .accessoryIsBlocked,
            staged: { f in
                try f.store.setBlocked(f.lamp.id, true)
                return { try f.store.identifyAccessory(f.lamp.id, as: f.owner) }
            }
        ),
        RuleCase("identify", nil) { try $0.store.identifyAccessory($0.lamp.id, as: $0.owner) },
        RuleCase(
            "write to an unreachable accessory",
            .accessoryNotReachable,
            staged: { f in
                try f.store.setReachable(f.lamp.id, false)
                return {
                    try f.store.writeValue(f.characteristic(Accessories.on, on: f.lamp), .bool(true), as: f.owner)
                }
            }
        ),
        RuleCase(
            "write to a bridged accessory of an unreachable bridge",
            .bridgedAccessoryNotReachable,
            staged: { f in
                try f.store.setReachable(f.bridge.id, false)
                return {
                    try f.store.writeValue(f.characteristic(Accessories.on, on: f.porch), .bool(true), as: f.owner)
                }
            }
        ),
        RuleCase("standard service without its required characteristic", .incompatibleAccessory) {
            (f: RulesFixture) throws -> Void in
            let broken = AccessoryDescription(
                name: "Broken",
                services: [
                    ServiceDescription(
                        type: Accessories.lightbulb,
                        characteristics: [CharacteristicDescription(type: Accessories.brightness)]
                    )
                ]
            )
            try f.store.addAccessory(broken, to: f.home.id, as: f.owner)
        },
        RuleCase("custom characteristic without metadata", .missingParameter) { (f: RulesFixture) throws -> Void in
            let vague = AccessoryDescription(
                name: "Vague",
                services: [
                    ServiceDescription(
                        type: RulesFixture.customService,
                        characteristics: [CharacteristicDescription(type: RulesFixture.customText)]
                    )
                ]
            )
            try f.store.addAccessory(vague, to: f.home.id, as: f.owner)
        },
        RuleCase("the same accessory twice", .objectAlreadyAssociatedToHome) { (f: RulesFixture) throws -> Void in
            var again = Accessories.bulb("Again")
            again.id = f.lamp.id
            try f.store.addAccessory(again, to: f.home.id, as: f.owner)
        },
        RuleCase("initial value above maximum", .valueHigherThanMaximum) { (f: RulesFixture) throws -> Void in
            var bulb = Accessories.bulb("Bright")
            bulb.services[0].characteristics[1].value = .int(101)
            try f.store.addAccessory(bulb, to: f.home.id, as: f.owner)
        },
        RuleCase("associate a Switch with a Lightbulb", nil) { (f: RulesFixture) throws -> Void in
            let switchAccessory = try f.store.addAccessory(
                AccessoryDescription(
                    name: "Wall Switch",
                    services: [
                        ServiceDescription(
                            type: Accessories.switchService,
                            characteristics: [CharacteristicDescription(type: Accessories.on)]
                        )
                    ]
                ),
                to: f.home.id,
                as: f.owner
            )[0]
            try f.store.updateAssociatedServiceType(switchAccessory.services[0], to: Accessories.lightbulb, as: f.owner)
        },
        RuleCase("associate a Lightbulb with anything", .invalidAssociatedServiceType) {
            try $0.store.updateAssociatedServiceType($0.lamp.services[0], to: Accessories.switchService, as: $0.owner)
        },
    ]

    static let valueCases: [RuleCase] = [
        RuleCase("write a read-only characteristic", .readOnlyCharacteristic) {
            try $0.store.writeValue(
                $0.characteristic(Accessories.currentTemperature, on: $0.sensor),
                .float(20),
                as: $0.owner
            )
        },
        RuleCase("read a write-only characteristic", .writeOnlyCharacteristic) {
            _ = try $0.store.readValue($0.characteristic(Accessories.identify, on: $0.custom), as: $0.owner)
        },
        RuleCase("notifications without event support", .notificationNotSupported) {
            try $0.store.enableNotification($0.characteristic(Accessories.name, on: $0.lamp), true, as: $0.owner)
        },
        RuleCase("notifications", nil) {
            try $0.store.enableNotification($0.characteristic(Accessories.on, on: $0.lamp), true, as: $0.owner)
        },
        RuleCase("brightness true", .invalidValueType) {
            try $0.store.writeValue($0.characteristic(Accessories.brightness, on: $0.lamp), .bool(true), as: $0.owner)
        },
        RuleCase("brightness 50.5", .invalidValueType) {
            try $0.store.writeValue($0.characteristic(Accessories.brightness, on: $0.lamp), .float(50.5), as: $0.owner)
        },
        RuleCase("brightness -1", .valueLowerThanMinimum) {
            try $0.store.writeValue($0.characteristic(Accessories.brightness, on: $0.lamp), .int(-1), as: $0.owner)
        },
        RuleCase("brightness 0", nil) {
            try $0.store.writeValue($0.characteristic(Accessories.brightness, on: $0.lamp), .int(0), as: $0.owner)
        },
        RuleCase("brightness 100", nil) {
            try $0.store.writeValue($0.characteristic(Accessories.brightness, on: $0.lamp), .int(100), as: $0.owner)
        },
        RuleCase("brightness 101", .valueHigherThanMaximum) {
            try $0.store.writeValue($0.characteristic(Accessories.brightness, on: $0.lamp), .int(101), as: $0.owner)
        },
        RuleCase("text of 6 bytes, max 5", .stringLongerThanMaximum) {
            try $0.store.writeValue(
                $0.characteristic(RulesFixture.customText, on: $0.custom),
                .string("abcdef"),
                as: $0.owner
            )
        },
        RuleCase("text of 5 bytes, max 5", nil) {
            try $0.store.writeValue(
                $0.characteristic(RulesFixture.customText, on: $0.custom),
                .string("abcde"),
                as: $0.owner
            )
        },
        RuleCase("text of 2 bytes, min 2", nil) {
            try $0.store.writeValue(
                $0.characteristic(RulesFixture.customText, on: $0.custom),
                .string("ab"),
                as: $0.owner
            )
        },
        RuleCase("text of 1 byte, min 2", .stringShorterThanMinimum) {
            try $0.store.writeValue(
                $0.characteristic(RulesFixture.customText, on: $0.custom),
                .string("a"),
                as: $0.owner
            )
        },
        RuleCase("level 9.5 on a 0.5 step", nil) {
            try $0.store.writeValue(
                $0.characteristic(RulesFixture.customLevel, on: $0.custom),
                .float(9.5),
                as: $0.owner
            )
        },
        RuleCase("level 9.3 off the 0.5 step", .invalidParameter) {
            try $0.store.writeValue(
                $0.characteristic(RulesFixture.customLevel, on: $0.custom),
                .float(9.3),
                as: $0.owner
            )
        },
        RuleCase("level 10.5", .valueHigherThanMaximum) {
            try $0.store.writeValue(
                $0.characteristic(RulesFixture.customLevel, on: $0.custom),
                .float(10.5),
                as: $0.owner
            )
        },
        RuleCase("level -0.5", .valueLowerThanMinimum) {
            try $0.store.writeValue(
                $0.characteristic(RulesFixture.customLevel, on: $0.custom),
                .float(-0.5),
                as: $0.owner
            )
        },
    ]

    static let automationCases: [RuleCase] = [
        RuleCase(
            "execute an empty action set",
            .noActionsInActionSet,
            staged: { f in
                let empty = try f.store.addActionSet(named: "Nothing", to: f.home.id, as: f.owner)
                return { _ = try f.store.executeActionSet(empty.id, as: f.owner) }
            }
        ),
        RuleCase(
            "an action already in another set",
            .actionInAnotherActionSet,
            staged: { f in
                let other = try f.store.addActionSet(named: "Other", to: f.home.id, as: f.owner)
                return { try f.store.addAction(f.lampOn, to: other.id, as: f.owner) }
            }
        ),
        RuleCase("an action twice in its set", .alreadyExists) {
            try $0.store.addAction($0.lampOn, to: $0.evening.id, as: $0.owner)
        },
        RuleCase("an action with an invalid value", .invalidValueType) { (f: RulesFixture) throws -> Void in
            let action = CharacteristicWriteAction(
                characteristic: f.characteristic(Accessories.brightness, on: f.lamp),
                targetValue: .string("dim")
            )
            try f.store.addAction(action, to: f.evening.id, as: f.owner)
        },
        RuleCase("an action on a read-only characteristic", .readOnlyCharacteristic) {
            (f: RulesFixture) throws -> Void in
            let action = CharacteristicWriteAction(
                characteristic: f.characteristic(Accessories.currentTemperature, on: f.sensor),
                targetValue: .float(1)
            )
            try f.store.addAction(action, to: f.evening.id, as: f.owner)
        },
        RuleCase("remove a built-in action set", .cannotRemoveBuiltinActionSet) {
            try $0.store.removeActionSet($0.home.actionSets[0], as: $0.owner)
        },
        RuleCase("remove a user action set", nil) { try $0.store.removeActionSet($0.evening.id, as: $0.owner) },
        RuleCase("fire date with seconds", .dateMustBeOnSpecifiedBoundaries) {
            _ = try $0.trigger(fireDate: $0.now + 3_600_000 + 1000)
        },
        RuleCase("one-shot fire date in the past", .fireDateInPast) { _ = try $0.trigger(fireDate: $0.now - minute) },
        RuleCase("one-shot fire date now", .fireDateInPast) { _ = try $0.trigger(fireDate: $0.now) },
        RuleCase("repeating fire date in the past", nil) {
            _ = try $0.trigger(fireDate: $0.now - minute, recurrence: 3600)
        },
        RuleCase("recurrence of 90 s", .recurrenceMustBeOnSpecifiedBoundaries) { _ = try $0.trigger(recurrence: 90) },
        RuleCase("recurrence of 4 minutes", .recurrenceTooSmall) { _ = try $0.trigger(recurrence: 240) },
        RuleCase("recurrence of 5 minutes", nil) { _ = try $0.trigger(recurrence: 300) },
        RuleCase("recurrence of 5 weeks", nil) { _ = try $0.trigger(recurrence: 5 * week) },
        RuleCase("recurrence of 5 weeks and a minute", .recurrenceTooLarge) {
            _ = try $0.trigger(recurrence: 5 * week + 60)
        },
        RuleCase(
            "update recurrence to 4 minutes",
            .recurrenceTooSmall,
            staged: { f in
                let trigger = try f.trigger()
                return { try f.store.updateRecurrence(of: trigger.id, to: .minutes(4), as: f.owner) }
            }
        ),
        RuleCase("new triggers are disabled", nil) { (f: RulesFixture) throws -> Void in
            guard try !f.trigger().isEnabled else { throw HomeServiceError(.unexpectedError, "enabled") }
        },
        RuleCase(
            "enable without action sets",
            .noRegisteredActionSets,
            staged: { f in
                let trigger = try f.trigger()
                return { try f.store.enableTrigger(trigger.id, true, as: f.owner) }
            }
        ),
        RuleCase(
            "enable with an empty action set",
            .noActionsInActionSet,
            staged: { f in
                let trigger = try f.trigger()
                let empty = try f.store.addActionSet(named: "Nothing", to: f.home.id, as: f.owner)
                try f.store.addActionSet(empty.id, toTrigger: trigger.id, as: f.owner)
                return { try f.store.enableTrigger(trigger.id, true, as: f.owner) }
            }
        ),
        RuleCase(
            "enable 6 weeks ahead",
            .cannotActivateTriggerTooFarInFuture,
            staged: { f in
                let trigger = try f.trigger(fireDate: f.now + 6 * week * 1000)
                try f.store.addActionSet(f.evening.id, toTrigger: trigger.id, as: f.owner)
                return { try f.store.enableTrigger(trigger.id, true, as: f.owner) }
            }
        ),
        RuleCase("enable an hour ahead", nil) { (f: RulesFixture) throws -> Void in
            let trigger = try f.trigger()
            try f.store.addActionSet(f.evening.id, toTrigger: trigger.id, as: f.owner)
            try f.store.enableTrigger(trigger.id, true, as: f.owner)
        },
        RuleCase(
            "enable 5 weeks less a minute ahead",
            nil,
            staged: { f in
                let trigger = try f.trigger(fireDate: f.now + 5 * week * 1000 - minute)
                try f.store.addActionSet(f.evening.id, toTrigger: trigger.id, as: f.owner)
                return { try f.store.enableTrigger(trigger.id, true, as: f.owner) }
            }
        ),
        RuleCase(
            "enable exactly 5 weeks ahead",
            .cannotActivateTriggerTooFarInFuture,
            staged: { f in
                let trigger = try f.trigger(fireDate: f.now + 5 * week * 1000)
                try f.store.addActionSet(f.evening.id, toTrigger: trigger.id, as: f.owner)
                return { try f.store.enableTrigger(trigger.id, true, as: f.owner) }
            }
        ),
        RuleCase("one-shot fire date a minute ahead", nil) { _ = try $0.trigger(fireDate: $0.now + minute) },
        RuleCase(
            "enabled trigger moved 6 weeks ahead",
            .cannotActivateTriggerTooFarInFuture,
            staged: { f in
                let trigger = try f.trigger()
                try f.store.addActionSet(f.evening.id, toTrigger: trigger.id, as: f.owner)
                try f.store.enableTrigger(trigger.id, true, as: f.owner)
                return { try f.store.updateFireDate(of: trigger.id, to: f.now + 6 * week * 1000, as: f.owner) }
            }
        ),
    ]

    @Test(arguments: StoreKind.allCases, namingCases)
    func naming(kind: StoreKind, rule: RuleCase) throws { try check(kind, rule) }

    @Test(arguments: StoreKind.allCases, accessoryCases)
    func roomsAndAccessories(kind: StoreKind, rule: RuleCase) throws { try check(kind, rule) }

    @Test(arguments: StoreKind.allCases, valueCases)
    func characteristicsAndValues(kind: StoreKind, rule: RuleCase) throws { try check(kind, rule) }

    @Test(arguments: StoreKind.allCases, automationCases)
    func actionSetsAndTriggers(kind: StoreKind, rule: RuleCase) throws { try check(kind, rule) }

    /// Runs the case and checks its code; a refused operation must leave the store exactly as it was.
    private func check(_ kind: StoreKind, _ rule: RuleCase) throws {
        let fixture = try RulesFixture(kind)
        let operation = try rule.staged(fixture)
        let before = StoreSnapshot(fixture.store)
        let code = codeThrown(operation)
        #expect(code == rule.expected)
        if code != nil {
            #expect(StoreSnapshot(fixture.store) == before, "a refused operation altered the store")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func errorMessagesNameTheObjectAndTheValue(kind: StoreKind) throws {
        let fixture = try RulesFixture(kind)
        do {
            try fixture.store.writeValue(
                fixture.characteristic(Accessories.brightness, on: fixture.lamp),
                .int(101),
                as: fixture.owner
            )
            Issue.record("expected a refusal")
        } catch {
            #expect(
                error.message.contains("Brightness") && error.message.contains("101") && error.message.contains("100")
            )
        }
        do {
            _ = try fixture.store.addRoom(named: "kitchen", to: fixture.home.id, as: fixture.owner)
            Issue.record("expected a refusal")
        } catch {
            #expect(error.message.contains("\"kitchen\"") && error.message.contains("\"Kitchen\""))
        }
    }
}
