import Foundation
import Testing

@testable import HomeService

/// The defects an audit of the store against HOMEKIT.md found (the behaviours it made us decide are
/// in StoreDecisionTests). Each test failed before its fix.
@Suite struct FidelityTests {
    // MARK: 1. Client dates cannot crash the server

    @Test(arguments: StoreKind.allCases)
    func farPastFireDatesAreRefusedNotTrapped(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let farPast = (Int64.min / 60_000) * 60_000
        #expect(
            codeThrown {
                _ = try f.store.addTrigger(
                    named: "Old",
                    fireDate: farPast,
                    recurrence: .minutes(5),
                    to: f.home.id,
                    as: f.owner
                )
            } == .invalidParameter
        )
        let trigger = try f.trigger(recurrence: 300)
        #expect(
            codeThrown { try f.store.updateFireDate(of: trigger.id, to: farPast, as: f.owner) } == .invalidParameter
        )
        #expect(
            codeThrown { try f.store.updateFireDate(of: trigger.id, to: (Int64.max / 60_000) * 60_000, as: f.owner) }
                == .invalidParameter
        )
    }

    @Test(arguments: StoreKind.allCases)
    func theEarliestRepeatingFireDateCanBeEnabled(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let trigger = try f.store.addTrigger(
            named: "Old",
            fireDate: TriggerRules.earliestDate,
            recurrence: .minutes(5),
            to: f.home.id,
            as: f.owner
        )
        try f.store.addActionSet(f.evening.id, toTrigger: trigger.id, as: f.owner)
        try f.store.enableTrigger(trigger.id, true, as: f.owner)
        #expect(f.store.triggers[trigger.id]!.isEnabled)
    }

    @Test(arguments: [
        TriggerRecurrence(Int64.max, .week), TriggerRecurrence(Int64.max, .second),
        TriggerRecurrence(Int64.max, .minute),
        TriggerRecurrence(Int64.min, .day), TriggerRecurrence(0, .hour), TriggerRecurrence(-60, .second),
    ])
    func extremeRecurrencesAreRefusedNotTrapped(recurrence: TriggerRecurrence) {
        let code = codeThrown { _ = try TriggerRules.checkRecurrence(recurrence) }
        #expect(code == .recurrenceTooLarge || code == .recurrenceMustBeOnSpecifiedBoundaries)
    }

    @Test func nextFireDateStaysInRangeAtTheBounds() {
        for unit in [TriggerRecurrence.minutes(5), .hours(840), .days(35), .weeks(5), .days(1)] {
            let next = TriggerRules.nextFireDate(
                fireDate: TriggerRules.earliestDate,
                recurrence: unit,
                timeZone: "Pacific/Kiritimati",
                now: TriggerRules.latestDate
            )
            #expect(next != nil && next! > TriggerRules.latestDate)
        }
    }

    // MARK: 2. Built-in names and the home's own name

    @Test(arguments: StoreKind.allCases)
    func aHomeNamedLikeABuiltInDoesNotFreeTheBuiltInsName(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let night = try store.addHome(named: "Good Night", as: harness.owner)
        let builtIns = night.actionSets.compactMap { store.actionSets[$0]?.name }
        #expect(builtIns.contains("Good Night"))
        try store.renameHome(night.id, to: "Cabin", as: harness.owner)
        #expect(
            codeThrown { _ = try store.addActionSet(named: "Good Night", to: night.id, as: harness.owner) }
                == .objectWithSimilarNameExistsInHome
        )
        let room = try store.addHome(named: "Default Room", as: harness.owner)
        try store.renameHome(room.id, to: "Lodge", as: harness.owner)
        #expect(
            codeThrown { _ = try store.addRoom(named: "Default Room", to: room.id, as: harness.owner) }
                == .objectWithSimilarNameExistsInHome
        )
        // And the name stays held across a restart.
        try harness.reopen()
        #expect(
            codeThrown { _ = try harness.store.addRoom(named: "default room", to: room.id, as: harness.owner) }
                == .objectWithSimilarNameExistsInHome
        )
    }

    // MARK: 3. Service names share the home's namespace

    @Test(arguments: StoreKind.allCases)
    func aRenamedServiceHoldsItsNameAgainstEveryKind(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let service = f.lamp.services[0]
        try f.store.renameService(service, to: "Reading Light", as: f.owner)
        let taken: [(String, () throws -> Void)] = [
            ("room", { _ = try f.store.addRoom(named: "reading light", to: f.home.id, as: f.owner) }),
            ("zone", { _ = try f.store.addZone(named: "Reading Light", to: f.home.id, as: f.owner) }),
            ("group", { _ = try f.store.addServiceGroup(named: "ReadingLight", to: f.home.id, as: f.owner) }),
            ("action set", { _ = try f.store.addActionSet(named: "Reading Light", to: f.home.id, as: f.owner) }),
            (
                "trigger",
                {
                    _ = try f.store.addTrigger(
                        named: "Reading Light",
                        fireDate: f.now + 3_600_000,
                        to: f.home.id,
                        as: f.owner
                    )
                }
            ),
            ("room rename", { try f.store.renameRoom(f.kitchen.id, to: "Reading Light", as: f.owner) }),
            ("accessory rename", { try f.store.renameAccessory(f.sensor.id, to: "Reading Light", as: f.owner) }),
            ("home rename", { try f.store.renameHome(f.home.id, to: "Reading Light", as: f.owner) }),
        ]
        for (what, body) in taken {
            #expect(codeThrown(body) == .objectWithSimilarNameExistsInHome, "\(what)")
        }
        // Its own accessory may take the name; removing the accessory frees it.
        try f.store.renameAccessory(f.lamp.id, to: "Reading Light", as: f.owner)
        try f.store.removeAccessory(f.lamp.id, as: f.owner)
        _ = try f.store.addRoom(named: "Reading Light", to: f.home.id, as: f.owner)
    }

    @Test(arguments: StoreKind.allCases)
    func servicesCannotTakeAnotherObjectsName(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        #expect(
            codeThrown { try f.store.renameService(f.lamp.services[0], to: "kitchen", as: f.owner) }
                == .objectWithSimilarNameExistsInHome
        )
        #expect(
            codeThrown { try f.store.renameService(f.lamp.services[0], to: "Home 1", as: f.owner) }
                == .objectWithSimilarNameExistsInHome
        )
        try f.harness.reopen()
        try f.harness.store.renameService(f.lamp.services[0], to: "Desk", as: f.owner)
        try f.harness.reopen()
        #expect(
            codeThrown { _ = try f.harness.store.addZone(named: "Desk", to: f.home.id, as: f.owner) }
                == .objectWithSimilarNameExistsInHome
        )
    }

    // MARK: 4. Name checks: order and length

    @Test(
        arguments: [
            ("-Garage", HomeKitErrorCode.nameDoesNotStartWithValidCharacters),
            ("Gar-age", .nameContainsProhibitedCharacters),
            ("Garage-", .nameContainsProhibitedCharacters),
            ("Garage ", .nameDoesNotEndWithValidCharacters),
            (String(repeating: "a", count: 64), nil),
            (String(repeating: "卧", count: 64), nil),
            (String(repeating: "a", count: 65), .stringLongerThanMaximum),
            (String(repeating: "a", count: 10_000), .stringLongerThanMaximum),
            ("a" + String(repeating: "\u{301}", count: 5_000), .stringLongerThanMaximum),
        ] as [(String, HomeKitErrorCode?)]
    )
    func nameRulesInHomeKitsOrderWithALengthLimit(name: String, expected: HomeKitErrorCode?) {
        #expect(codeThrown { try NameRules.validate(name, kind: "room") } == expected)
    }

    @Test(arguments: StoreKind.allCases)
    func everyNamedKindAndStoredStringHasTheLimit(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let long = String(repeating: "x", count: 10_000)
        let before = StoreSnapshot(f.store)
        let attempts: [(String, () throws -> Void)] = [
            ("home", { _ = try f.store.addHome(named: long, as: f.owner) }),
            ("room", { _ = try f.store.addRoom(named: long, to: f.home.id, as: f.owner) }),
            ("zone", { _ = try f.store.addZone(named: long, to: f.home.id, as: f.owner) }),
            ("group", { _ = try f.store.addServiceGroup(named: long, to: f.home.id, as: f.owner) }),
            ("action set", { _ = try f.store.addActionSet(named: long, to: f.home.id, as: f.owner) }),
            (
                "trigger",
                { _ = try f.store.addTrigger(named: long, fireDate: f.now + 3_600_000, to: f.home.id, as: f.owner) }
            ),
            ("service", { try f.store.renameService(f.lamp.services[0], to: long, as: f.owner) }),
            ("accessory", { try f.store.renameAccessory(f.lamp.id, to: long, as: f.owner) }),
            ("home rename", { try f.store.renameHome(f.home.id, to: long, as: f.owner) }),
            ("account", { _ = try f.store.createAccount(named: long, by: f.owner) }),
            ("advertised name", { _ = try f.store.addAccessory(Accessories.bulb(long), to: f.home.id, as: f.owner) }),
            (
                "manufacturer",
                {
                    var bulb = Accessories.bulb("Desk Lamp")
                    bulb.manufacturer = long
                    _ = try f.store.addAccessory(bulb, to: f.home.id, as: f.owner)
                }
            ),
            ("firmware report", { try f.store.updateFirmwareVersion(f.lamp.id, to: long, by: f.lamp.id) }),
            ("time zone", { try f.store.setTimeZone(of: f.home.id, to: long, as: f.owner) }),
        ]
        for (what, body) in attempts {
            #expect(codeThrown(body) == .stringLongerThanMaximum, "\(what)")
        }
        #expect(StoreSnapshot(f.store) == before)
    }

    // MARK: 5. No member ends up with two similar home names

    @Test(arguments: StoreKind.allCases)
    func sharingOrRenamingAHomeChecksEveryMembersHomes(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let owner = harness.owner
        let bob = try harness.account("Bob")
        _ = try store.addHome(named: "Lake House", as: bob)
        let cabin = try store.addHome(named: "Cabin", as: owner)
        let lake = try store.addHome(named: "lakehouse", as: owner)
        #expect(
            codeThrown { try store.addUser(bob, to: lake.id, role: .guest, as: owner) } == .homeWithSimilarNameExists
        )
        try store.addUser(bob, to: cabin.id, role: .guest, as: owner)
        #expect(
            codeThrown { try store.renameHome(cabin.id, to: "Lake House", as: owner) } == .homeWithSimilarNameExists
        )
        #expect(store.homes(of: bob).map(\.name).sorted() == ["Cabin", "Lake House"])
    }

    // MARK: 6. Enabled triggers keep satisfying the enable rules

    /// A fixture with an enabled trigger whose only action set is "Evening" (one action: lamp on).
    static func enabledTrigger(_ kind: StoreKind) throws -> (RulesFixture, TimerTrigger) {
        let f = try RulesFixture(kind)
        let trigger = try f.trigger()
        try f.store.addActionSet(f.evening.id, toTrigger: trigger.id, as: f.owner)
        try f.store.enableTrigger(trigger.id, true, as: f.owner)
        return (f, trigger)
    }

    @Test(arguments: StoreKind.allCases)
    func removingTheLastActionDisablesTheTrigger(kind: StoreKind) throws {
        let (f, trigger) = try Self.enabledTrigger(kind)
        let seen = try committedEvents(in: f.store) {
            try f.store.removeAction(f.lampOn.id, from: f.evening.id, as: f.owner)
        }
        #expect(f.store.triggers[trigger.id]!.isEnabled == false)
        #expect(seen.contains { $0.kind == .triggerUpdated && $0.object == trigger.id.raw && $0.flag == false })
        try f.harness.reopen()
        #expect(f.harness.store.triggers[trigger.id]!.isEnabled == false)
    }

    @Test(arguments: StoreKind.allCases)
    func removingTheAccessoryOfTheLastActionDisablesTheTrigger(kind: StoreKind) throws {
        let (f, trigger) = try Self.enabledTrigger(kind)
        let seen = try committedEvents(in: f.store) { try f.store.removeAccessory(f.lamp.id, as: f.owner) }
        #expect(f.store.triggers[trigger.id]!.isEnabled == false)
        #expect(seen.contains { $0.kind == .triggerUpdated && $0.object == trigger.id.raw && $0.flag == false })
    }

    @Test(arguments: StoreKind.allCases)
    func aDisabledTriggerCannotFire(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let trigger = try f.trigger()
        #expect(codeThrown { try f.store.recordFiring(of: trigger.id, at: f.now) } == .operationNotSupported)
        #expect(f.store.triggers[trigger.id]!.lastFireDate == nil)
    }
}
