import Foundation
import Testing

@testable import HomeService

/// The defects an audit of the store against HOMEKIT.md found, and the behaviours it made us decide
/// (docs/STORE.md, "Decisions"). Each test failed before its fix.
@Suite struct FidelityTests {
    static let minute: Int64 = 60_000

    /// Runs `body` and collects the kinds of the changes it committed.
    static func events(in store: HomeStore, _ body: () throws -> Void) rethrows -> [ChangeEvent] {
        store.waitForCommits()
        var seen: [ChangeEvent] = []
        store.changeObserver = { seen.append($0.event) }
        defer { store.changeObserver = nil }
        try body()
        store.waitForCommits()
        return seen
    }

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
        let seen = try Self.events(in: f.store) {
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
        let seen = try Self.events(in: f.store) { try f.store.removeAccessory(f.lamp.id, as: f.owner) }
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

    // MARK: Decisions

    @Test(arguments: StoreKind.allCases)
    func theBridgeItselfAppearsInEvents(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let bridge = f.bridge.id.raw
        let reach = try Self.events(in: f.store) { try f.store.setReachable(f.bridge.id, false) }
        #expect(reach.filter { $0.kind == .reachabilityUpdated }.map(\.object) == [bridge, f.porch.id.raw])
        let moved = try Self.events(in: f.store) {
            try f.store.assignAccessory(f.bridge.id, to: f.kitchen.id, as: f.owner)
        }
        #expect(moved.map(\.kind) == [.roomForAccessoryUpdated] && moved[0].object == bridge)
        let renamed = try Self.events(in: f.store) {
            try f.store.renameAccessory(f.bridge.id, to: "Hub Two", as: f.owner)
        }
        #expect(renamed.map(\.kind) == [.accessoryNameUpdated] && renamed[0].object == bridge)
        let removed = try Self.events(in: f.store) { try f.store.removeAccessory(f.bridge.id, as: f.owner) }
        #expect(removed.filter { $0.kind == .accessoryRemoved }.map(\.object) == [f.porch.id.raw, bridge])
    }

    @Test(arguments: StoreKind.allCases)
    func theStartUpResetMarksEachReachableAccessoryOnceInTheNameOfItsLink(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        try f.store.setReachable(f.sensor.id, false)
        f.store.waitForCommits()
        var seen: [HomeChange] = []
        f.store.changeObserver = { seen.append($0) }
        #expect(f.store.markEveryAccessoryUnreachable() == 4)
        // Memory first: reads are right before anything is recorded.
        #expect(f.store.accessories.values.allSatisfy { !$0.isReachable })
        f.store.waitForCommits()
        #expect(seen.isEmpty)
        #expect(try f.store.recordStartUpUnreachability(limit: .max) == 0)
        f.store.waitForCommits()
        let reporters = Dictionary(uniqueKeysWithValues: seen.map { ($0.event.object, $0.initiator) })
        #expect(seen.count == 4 && seen.allSatisfy { $0.event.kind == .reachabilityUpdated && $0.event.flag == false })
        #expect(reporters[f.porch.id.raw] == .accessory(f.bridge.id))
        for accessory in [f.lamp, f.bridge, f.custom] {
            #expect(reporters[accessory.id.raw] == .accessory(accessory.id))
        }
        seen = []
        #expect(f.store.markEveryAccessoryUnreachable() == 0)
        #expect(try f.store.recordStartUpUnreachability(limit: .max) == 0)
        f.store.waitForCommits()
        #expect(seen.isEmpty)
        try f.harness.reopen()
        #expect(f.harness.store.accessories.values.allSatisfy { !$0.isReachable })
    }

    /// The records in batches (as `homed` makes them): each batch records at most its limit, and
    /// batches until none is left record every accessory once.
    @Test(arguments: StoreKind.allCases)
    func theStartUpResetIsRecordedInBatchesEachAccessoryOnce(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        f.store.waitForCommits()
        var seen: [HomeChange] = []
        f.store.changeObserver = { seen.append($0) }
        #expect(f.store.markEveryAccessoryUnreachable() == 5)
        var remaining: [Int] = []
        repeat {
            remaining.append(try f.store.recordStartUpUnreachability(limit: 2))
        } while remaining.last != 0
        f.store.waitForCommits()
        #expect(remaining == [3, 1, 0])
        #expect(seen.count == 5 && seen.allSatisfy { $0.event.kind == .reachabilityUpdated && $0.event.flag == false })
        #expect(Set(seen.map(\.event.object)).count == 5)
        try f.harness.reopen()
        #expect(f.harness.store.accessories.values.allSatisfy { !$0.isReachable })
    }

    /// An accessory whose link attaches before its start-up record is made keeps its own change:
    /// no stale "unreachable" follows its "reachable", in the log or in the file.
    @Test(arguments: StoreKind.allCases)
    func anAccessoryThatAttachesBeforeItsStartUpRecordIsNotRecordedUnreachable(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        f.store.waitForCommits()
        var seen: [HomeChange] = []
        f.store.changeObserver = { seen.append($0) }
        f.store.markEveryAccessoryUnreachable()
        try f.store.setReachable(f.lamp.id, true)
        #expect(try f.store.recordStartUpUnreachability(limit: .max) == 0)
        f.store.waitForCommits()
        let lampEvents = seen.filter { $0.event.object == f.lamp.id.raw }
        #expect(lampEvents.map(\.event.flag) == [true])
        #expect(seen.count == 5)
        try f.harness.reopen()
        #expect(f.harness.store.accessories[f.lamp.id]?.isReachable == true)
        #expect(f.harness.store.accessories.values.filter(\.isReachable).count == 1)
    }

    @Test(arguments: StoreKind.allCases, [HomeRole.administrator, .guest])
    func onlyTheOwnerRemovesAHomeOthersLeaveIt(kind: StoreKind, role: HomeRole) throws {
        let f = try RulesFixture(kind)
        let carol = try f.harness.account("Carol")
        try f.store.addUser(carol, to: f.home.id, role: role, as: f.owner)
        var outcome: HomeStore.HomeRemoval?
        let seen = try Self.events(in: f.store) { outcome = try f.store.removeHome(f.home.id, as: carol) }
        #expect(outcome == .left)
        #expect(f.store.homes[f.home.id] != nil)
        #expect(f.store.homes(of: carol).isEmpty)
        #expect(f.store.homes(of: f.owner).map(\.id) == [f.home.id])
        #expect(seen.map(\.kind) == [.userRemoved] && seen[0].object == carol.raw)
        #expect(codeThrown { _ = try f.store.home(f.home.id, as: carol) } == .notFound)
        try f.harness.reopen()
        #expect(f.harness.store.homes[f.home.id]?.members[carol] == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func removingThePrimaryHomeMakesTheOldestRemainingOnePrimary(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let owner = harness.owner
        let first = try store.addHome(named: "First", as: owner)
        let second = try store.addHome(named: "Second", as: owner)
        _ = try store.addHome(named: "Third", as: owner)
        #expect(store.accounts[owner]!.primaryHome == first.id)
        let seen = try Self.events(in: store) { _ = try store.removeHome(first.id, as: owner) }
        #expect(store.accounts[owner]!.primaryHome == second.id)
        #expect(seen.contains { $0.kind == .primaryHomeUpdated && $0.object == second.id.raw })
        // A member leaving their primary home, or removed from it, is treated the same way.
        let dana = try harness.account("Dana")
        let shared = try store.addHome(named: "Shared", as: owner)
        let own = try store.addHome(named: "Dana's", as: dana)
        try store.addUser(dana, to: shared.id, role: .guest, as: owner)
        try store.setPrimaryHome(shared.id, as: dana)
        try store.removeUser(dana, from: shared.id, as: owner)
        #expect(store.accounts[dana]!.primaryHome == own.id)
        try harness.reopen()
        #expect(harness.store.accounts[owner]!.primaryHome == second.id)
        #expect(harness.store.accounts[dana]!.primaryHome == own.id)
    }

    @Test(arguments: StoreKind.allCases)
    func homesHaveASettableTimeZone(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        #expect(f.home.timeZone == "UTC")
        #expect(
            codeThrown { try f.store.setTimeZone(of: f.home.id, to: "Mars/Olympus", as: f.owner) } == .invalidParameter
        )
        let seen = try Self.events(in: f.store) {
            try f.store.setTimeZone(of: f.home.id, to: "Europe/Berlin", as: f.owner)
        }
        #expect(seen.map(\.kind) == [.homeTimeZoneUpdated] && seen[0].name == "Europe/Berlin")
        let trigger = try f.store.addTrigger(
            named: "Morning",
            fireDate: f.now + 3_600_000,
            recurrence: .days(1),
            to: f.home.id,
            as: f.owner
        )
        try f.harness.reopen()
        #expect(f.harness.store.homes[f.home.id]!.timeZone == "Europe/Berlin")
        #expect(f.harness.store.triggers[trigger.id]!.recurrence == .days(1))
    }

    /// Milliseconds for a UTC date and time.
    static func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int = 0) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let date = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))!
        return Int64(date.timeIntervalSince1970 * 1000)
    }

    @Test func dailyRecurrenceKeepsTheWallClockTimeAcrossDaylightSaving() {
        // 07:00 in Berlin is 06:00 UTC in winter and 05:00 UTC from 29 March 2026 on.
        let fireDate = Self.utc(2026, 3, 27, 6)
        let justAfterChange = Self.utc(2026, 3, 29, 4)
        let next = TriggerRules.nextFireDate(
            fireDate: fireDate,
            recurrence: .days(1),
            timeZone: "Europe/Berlin",
            now: justAfterChange
        )
        #expect(next == Self.utc(2026, 3, 29, 5))
        let weekly = TriggerRules.nextFireDate(
            fireDate: fireDate,
            recurrence: .weeks(1),
            timeZone: "Europe/Berlin",
            now: Self.utc(2026, 3, 30, 0)
        )
        #expect(weekly == Self.utc(2026, 4, 3, 5))
        // Hours are elapsed time: six hours after 06:00 UTC is 12:00 UTC whatever the zone.
        let hourly = TriggerRules.nextFireDate(
            fireDate: fireDate,
            recurrence: .hours(6),
            timeZone: "Europe/Berlin",
            now: Self.utc(2026, 3, 29, 4)
        )
        #expect(hourly == Self.utc(2026, 3, 29, 6))
        // In UTC a day is always 24 hours.
        let utcDaily = TriggerRules.nextFireDate(
            fireDate: fireDate,
            recurrence: .days(1),
            timeZone: "UTC",
            now: justAfterChange
        )
        #expect(utcDaily == Self.utc(2026, 3, 29, 6))
    }

    @Test(arguments: StoreKind.allCases)
    func crossHomeReferencesSay11OnlyToMembersOfBothHomes(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let other = try f.store.addHome(named: "Cabin", as: f.owner)
        let attic = try f.store.addRoom(named: "Attic", to: other.id, as: f.owner)
        #expect(
            codeThrown { try f.store.addRoom(attic.id, toZone: f.upstairs.id, as: f.owner) }
                == .objectAssociatedToAnotherHome
        )
        #expect(
            codeThrown { try f.store.assignAccessory(f.lamp.id, to: attic.id, as: f.owner) }
                == .objectAssociatedToAnotherHome
        )
        let eve = try f.harness.account("Eve")
        try f.store.addUser(eve, to: f.home.id, role: .administrator, as: f.owner)
        #expect(codeThrown { try f.store.addRoom(attic.id, toZone: f.upstairs.id, as: eve) } == .notFound)
        #expect(codeThrown { try f.store.addRoom(RoomID.random(), toZone: f.upstairs.id, as: eve) } == .notFound)
        let cabinSet = try f.store.addActionSet(named: "Cabin Evening", to: other.id, as: f.owner)
        let trigger = try f.trigger()
        #expect(
            codeThrown { try f.store.addActionSet(cabinSet.id, toTrigger: trigger.id, as: f.owner) }
                == .objectAssociatedToAnotherHome
        )
        #expect(codeThrown { try f.store.addActionSet(cabinSet.id, toTrigger: trigger.id, as: eve) } == .notFound)
    }

    @Test(arguments: StoreKind.allCases)
    func objectLimitsRefuseWith49AndChangeNothing(kind: StoreKind) throws {
        var limits = ObjectLimits()
        limits.homesPerAccount = 2
        limits.roomsPerHome = 1
        limits.zonesPerHome = 1
        limits.accessoriesPerHome = 2
        limits.actionSetsPerHome = 5
        limits.actionsPerActionSet = 1
        limits.triggersPerHome = 1
        limits.usersPerHome = 2
        limits.serviceGroupsPerHome = 1
        limits.tokensPerAccount = 2
        let harness = try StoreHarness(kind, limits: limits)
        let store = harness.store
        let owner = harness.owner
        let home = try store.addHome(named: "Home", as: owner)
        _ = try store.addRoom(named: "Hall", to: home.id, as: owner)
        _ = try store.addZone(named: "Up", to: home.id, as: owner)
        _ = try store.addServiceGroup(named: "Lights", to: home.id, as: owner)
        let lamp = try store.addAccessory(Accessories.bulb(), to: home.id, as: owner)[0]
        let evening = try store.addActionSet(named: "Evening", to: home.id, as: owner)
        let on = store.characteristic(ofType: Accessories.on, on: lamp.id)
        let brightness = store.characteristic(ofType: Accessories.brightness, on: lamp.id)
        try store.addAction(
            CharacteristicWriteAction(characteristic: on.id, targetValue: .bool(true)),
            to: evening.id,
            as: owner
        )
        _ = try store.addTrigger(named: "Dusk", fireDate: harness.clock.now + 3_600_000, to: home.id, as: owner)
        let friend = try harness.account("Friend")
        try store.addUser(friend, to: home.id, role: .guest, as: owner)
        _ = try store.addHome(named: "Cabin", as: owner)
        let before = StoreSnapshot(store)
        let refused: [(String, () throws -> Void)] = [
            ("home", { _ = try store.addHome(named: "Third", as: owner) }),
            ("room", { _ = try store.addRoom(named: "Den", to: home.id, as: owner) }),
            ("zone", { _ = try store.addZone(named: "Down", to: home.id, as: owner) }),
            ("group", { _ = try store.addServiceGroup(named: "Fans", to: home.id, as: owner) }),
            ("action set", { _ = try store.addActionSet(named: "Night Out", to: home.id, as: owner) }),
            (
                "action",
                {
                    try store.addAction(
                        CharacteristicWriteAction(characteristic: brightness.id, targetValue: .int(10)),
                        to: evening.id,
                        as: owner
                    )
                }
            ),
            (
                "trigger",
                {
                    _ = try store.addTrigger(
                        named: "Dawn",
                        fireDate: harness.clock.now + 3_600_000,
                        to: home.id,
                        as: owner
                    )
                }
            ),
            (
                "bridge with one behind",
                {
                    _ = try store.addAccessory(
                        Accessories.bridge(behind: [Accessories.bulb("Porch")]),
                        to: home.id,
                        as: owner
                    )
                }
            ),
            ("user", { try store.addUser(try harness.account("Third Person"), to: home.id, role: .guest, as: owner) }),
        ]
        for (what, body) in refused {
            #expect(codeThrown(body) == .maximumObjectLimitReached, "\(what)")
        }
        _ = try store.issueToken(for: friend, by: owner)
        _ = try store.issueToken(for: friend, by: owner)
        #expect(codeThrown { _ = try store.issueToken(for: friend, by: owner) } == .maximumObjectLimitReached)
        // Refusals changed nothing but the accounts and tokens made along the way.
        #expect(StoreSnapshot(store).homes == before.homes && StoreSnapshot(store).rooms == before.rooms)
        // A single accessory still fits.
        _ = try store.addAccessory(Accessories.sensor(), to: home.id, as: owner)
    }

    @Test(arguments: StoreKind.allCases)
    func servicesWithTypesFindsEveryMatchingService(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let found = try f.store.services(ofTypes: [Accessories.lightbulb.lowercased()], in: f.home.id, as: f.owner)
        #expect(found.map(\.accessory) == [f.lamp.id, f.porch.id])
        let both = try f.store.services(
            ofTypes: [Accessories.lightbulb, Accessories.temperatureSensor],
            in: f.home.id,
            as: f.owner
        )
        #expect(Set(both.map(\.accessory)) == [f.lamp.id, f.porch.id, f.sensor.id])
        #expect(
            try f.store.services(ofTypes: ["0000FFFF-0000-1000-8000-0026BB765291"], in: f.home.id, as: f.owner).isEmpty
        )
        let stranger = try f.harness.account("Sam")
        #expect(
            codeThrown { _ = try f.store.services(ofTypes: [Accessories.lightbulb], in: f.home.id, as: stranger) }
                == .notFound
        )
    }

    @Test(arguments: StoreKind.allCases)
    func cachedReadsOfAnUnreachableAccessoryAnswerWithTheLastValue(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let brightness = f.characteristic(Accessories.brightness, on: f.lamp)
        let written = try f.store.writeValue(brightness, .int(70), as: f.owner)
        try f.store.setReachable(f.lamp.id, false)
        let reading = try f.store.readValue(brightness, as: f.owner)
        #expect(reading.value == .int(70) && reading.updatedAt == written.updatedAt && !reading.isReachable)
        #expect(codeThrown { try f.store.writeValue(brightness, .int(80), as: f.owner) } == .accessoryNotReachable)
        try f.store.setReachable(f.lamp.id, true)
        #expect(try f.store.readValue(brightness, as: f.owner).isReachable)
    }
}
