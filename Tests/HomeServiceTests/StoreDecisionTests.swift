import Foundation
import Testing

@testable import HomeService

/// The behaviours the store's audit against HOMEKIT.md made us decide (docs/STORE.md, "Decisions").
@Suite struct StoreDecisionTests {
    @Test(arguments: StoreKind.allCases)
    func theBridgeItselfAppearsInEvents(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let bridge = f.bridge.id.raw
        let reach = try committedEvents(in: f.store) { try f.store.setReachable(f.bridge.id, false) }
        #expect(reach.filter { $0.kind == .reachabilityUpdated }.map(\.object) == [bridge, f.porch.id.raw])
        let moved = try committedEvents(in: f.store) {
            try f.store.assignAccessory(f.bridge.id, to: f.kitchen.id, as: f.owner)
        }
        #expect(moved.map(\.kind) == [.roomForAccessoryUpdated] && moved[0].object == bridge)
        let renamed = try committedEvents(in: f.store) {
            try f.store.renameAccessory(f.bridge.id, to: "Hub Two", as: f.owner)
        }
        #expect(renamed.map(\.kind) == [.accessoryNameUpdated] && renamed[0].object == bridge)
        let removed = try committedEvents(in: f.store) { try f.store.removeAccessory(f.bridge.id, as: f.owner) }
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
        let seen = try committedEvents(in: f.store) { outcome = try f.store.removeHome(f.home.id, as: carol) }
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
        let seen = try committedEvents(in: store) { _ = try store.removeHome(first.id, as: owner) }
        #expect(store.accounts[owner]!.primaryHome == second.id)
        #expect(seen.contains { $0.kind == .primaryHomeUpdated && $0.object == second.id.raw })
        // A member leaving their primary home, or removed from it, is treated the same way.
        let dana = try harness.account("Dana")
        let shared = try store.addHome(named: "Shared", as: owner)
        let own = try store.addHome(named: "Dana's", as: dana)
        try store.addUser(dana, to: shared.id, role: .guest, as: owner)
        try store.setPrimaryHome(shared.id, as: dana)
        try store.removeUser(UserID(account: dana, home: shared.id), from: shared.id, as: owner)
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
        let seen = try committedEvents(in: f.store) {
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

    /// A refused date is shown as the person typed it and as the request carried it.
    @Test(arguments: [
        (Int64(1_799_996_430_000), "2027-01-15T07:00:30Z (1799996430000 ms)"),
        (Int64(1_799_996_430_250), "2027-01-15T07:00:30.250Z (1799996430250 ms)"),
        (TriggerRules.earliestDate, "1970-01-01T00:00:00Z (0 ms)"),
        (TriggerRules.latestDate, "9999-12-31T23:59:00Z (253402300740000 ms)"),
    ])
    func refusedDatesAreDescribedInISO8601AndMilliseconds(date: Int64, described: String) {
        #expect(TriggerRules.described(date) == described)
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

    /// The API's check that a request's object is in its home looks in the named kind's table only:
    /// a room's id given where an action set's is expected is no action set (it used to pass, found
    /// in the rooms), and an object of another home says 11 only to a member of both.
    @Test(arguments: StoreKind.allCases)
    func theObjectInHomeCheckFindsOnlyTheKindItIsAskedFor(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let check = { (id: UniqueIdentifier, account: AccountID) in
            codeThrown { try f.store.checkObject(ActionSetID(id), isIn: f.home.id, as: account) }
        }
        #expect(check(f.evening.id.raw, f.owner) == nil)
        #expect(check(f.kitchen.id.raw, f.owner) == .notFound)
        #expect(check(f.lamp.id.raw, f.owner) == .notFound)
        #expect(codeThrown { try f.store.checkObject(f.kitchen.id, isIn: f.home.id, as: f.owner) } == nil)
        let cabin = try f.store.addHome(named: "Cabin", as: f.owner)
        let cabinSet = try f.store.addActionSet(named: "Cabin Evening", to: cabin.id, as: f.owner)
        #expect(check(cabinSet.id.raw, f.owner) == .objectAssociatedToAnotherHome)
        let eve = try f.harness.account("Eve")
        try f.store.addUser(eve, to: f.home.id, role: .guest, as: f.owner)
        #expect(check(f.evening.id.raw, eve) == nil)
        #expect(check(cabinSet.id.raw, eve) == .notFound)
        let stranger = try f.harness.account("Sam")
        #expect(check(f.evening.id.raw, stranger) == .notFound)
    }

    /// A target value updated through the API's check of the set (the store then skips its own
    /// lookup of the set and the caller's role) keeps the store's rules: a guest is refused with 17
    /// and changes nothing, an action of no set is 2, an administrator's update is made and recorded.
    @Test(arguments: StoreKind.allCases)
    func aTargetUpdateThroughTheSetsCheckKeepsTheRoleAndActionRules(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let gina = try f.harness.account("Gina")
        try f.store.addUser(gina, to: f.home.id, role: .guest, as: f.owner)
        let update = { (account: AccountID, action: ActionID) in
            codeThrown {
                let checked = try f.store.checkObject(f.evening.id, isIn: f.home.id, as: account)
                _ = try f.store.updateTargetValue(of: action, in: checked, to: .bool(false), as: account) { $0 }
            }
        }
        #expect(update(gina, f.lampOn.id) == .insufficientPrivileges)
        #expect(update(f.owner, ActionID.random()) == .notFound)
        #expect(f.store.actionSets[f.evening.id]?.actions.first?.targetValue == f.lampOn.targetValue)
        let events = committedEvents(in: f.store) { #expect(update(f.owner, f.lampOn.id) == nil) }
        #expect(events.map(\.kind) == [.actionSetActionsUpdated])
        try f.harness.reopen()
        #expect(f.harness.store.actionSets[f.evening.id]?.actions.first?.targetValue == .bool(false))
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
        _ = try store.issueToken(for: friend, by: owner, within: .unlimited)
        _ = try store.issueToken(for: friend, by: owner, within: .unlimited)
        #expect(
            codeThrown { _ = try store.issueToken(for: friend, by: owner, within: .unlimited) }
                == .maximumObjectLimitReached
        )
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

    /// A write checked before it went to the accessory is made as checked when nothing a check
    /// reads changed meanwhile (other values may have), and is checked again when something did:
    /// the accessory became unreachable or was blocked, the caller left the home, the
    /// characteristic went with its accessory.
    @Test(arguments: StoreKind.allCases)
    func aCheckedWriteIsCheckedAgainWhenWhatItsCheckReadChanged(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let brightness = f.characteristic(Accessories.brightness, on: f.lamp)
        let on = f.characteristic(Accessories.on, on: f.lamp)
        let carol = try f.harness.account("Carol")
        try f.store.addUser(carol, to: f.home.id, role: .guest, as: f.owner)

        let standing = try f.store.checkWrite(brightness, .int(30), as: carol)
        try f.store.writeValue(on, .bool(true), as: f.owner)
        #expect(f.store.writeCheckVersion == standing.version)
        #expect(try f.store.writeValue(standing).value == .int(30))

        let beforeUnreachable = try f.store.checkWrite(brightness, .int(40), as: carol)
        try f.store.setReachable(f.lamp.id, false)
        #expect(codeThrown { try f.store.writeValue(beforeUnreachable) } == .accessoryNotReachable)
        try f.store.setReachable(f.lamp.id, true)

        let beforeBlock = try f.store.checkWrite(brightness, .int(45), as: carol)
        try f.store.setBlocked(f.lamp.id, true)
        #expect(codeThrown { try f.store.writeValue(beforeBlock) } == .accessoryIsBlocked)
        try f.store.setBlocked(f.lamp.id, false)

        let beforeLeaving = try f.store.checkWrite(brightness, .int(50), as: carol)
        try f.store.removeUser(UserID(account: carol, home: f.home.id), from: f.home.id, as: f.owner)
        #expect(codeThrown { try f.store.writeValue(beforeLeaving) } == .notFound)

        let beforeRemoval = try f.store.checkWrite(brightness, .int(60), as: f.owner)
        try f.store.removeAccessory(f.lamp.id, as: f.owner)
        #expect(codeThrown { try f.store.writeValue(beforeRemoval) } == .notFound)
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
