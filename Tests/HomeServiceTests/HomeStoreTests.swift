import Foundation
import SQLite
import Testing

@testable import HomeService

/// The store's operations and what they record, on both kinds of storage.
@Suite struct HomeStoreTests {
    @Test(arguments: StoreKind.allCases)
    func firstOpenCreatesTheOwnerOnceWithAWorkingToken(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        #expect(harness.store.account(forToken: harness.ownerToken)?.id == harness.owner)
        #expect(harness.store.account(forToken: harness.ownerToken + "x") == nil)
        try harness.reopen()
        #expect(harness.store.newOwnerToken == nil)
        #expect(harness.store.accounts.values.filter(\.isOwner).count == 1)
        #expect(harness.store.account(forToken: harness.ownerToken)?.id == harness.owner)
    }

    @Test(arguments: StoreKind.allCases)
    func tokensAreIssuedShownOnceAndRevoked(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let anna = try harness.account("Anna")
        let (record, token) = try store.issueToken(for: anna, by: anna, within: .unlimited)
        #expect(token.hasPrefix("hrt_") && token.count == 68)
        #expect(store.account(forToken: token)?.id == anna)
        let bob = try harness.account("Bob")
        #expect(
            codeThrown { _ = try store.issueToken(for: anna, by: bob, within: .unlimited) } == .insufficientPrivileges
        )
        #expect(codeThrown { try store.revokeToken(record.id, by: bob, within: .unlimited) } == .notFound)
        #expect(codeThrown { _ = try store.createAccount(named: "Eve", by: anna) } == .insufficientPrivileges)
        try store.revokeToken(record.id, by: anna, within: .unlimited)
        #expect(store.account(forToken: token) == nil)
        try harness.reopen()
        #expect(harness.store.account(forToken: token) == nil)
        #expect(try harness.store.tokens(of: anna, by: anna, within: .unlimited).isEmpty)
    }

    @Test func tokensAreStoredOnlyAsHashes() throws {
        let harness = try StoreHarness(.file)
        let anna = try harness.account("Anna")
        let (_, token) = try harness.store.issueToken(for: anna, by: harness.owner, within: .unlimited)
        harness.store.waitForCommits()
        for suffix in ["", "-wal"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: harness.path + suffix))) ?? Data()
            for secret in [token, harness.ownerToken, String(token.dropFirst(4))] {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "token text found in \(harness.path)\(suffix)")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aNewHomeHasItsRoomForTheEntireHomeBuiltInActionSetsAndBecomesPrimary(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let home = try store.addHome(named: "Home", as: harness.owner)
        #expect(store.rooms[home.roomForEntireHome]?.name == HomeStore.roomForEntireHomeName)
        #expect(home.rooms.isEmpty)
        #expect(home.members == [harness.owner: .administrator])
        #expect(
            Set(home.actionSets.map { store.actionSets[$0]!.kind }) == [.wakeUp, .sleep, .homeDeparture, .homeArrival]
        )
        #expect(store.accounts[harness.owner]?.primaryHome == home.id)
        let second = try store.addHome(named: "Cabin", as: harness.owner)
        #expect(store.accounts[harness.owner]?.primaryHome == home.id)
        try store.setPrimaryHome(second.id, as: harness.owner)
        #expect(store.accounts[harness.owner]?.primaryHome == second.id)
        store.waitForCommits()
        guard case .changes(let changes) = try store.changes(in: home.id, after: 0, as: harness.owner) else {
            Issue.record("expected changes")
            return
        }
        #expect(changes.map(\.event.kind) == [.homeAdded, .primaryHomeUpdated])
        #expect(changes.map(\.revision) == [1, 2])
        #expect(changes.allSatisfy { $0.initiator == .account(harness.owner) })
    }

    @Test(arguments: StoreKind.allCases)
    func removingARoomMovesItsAccessoriesAndTakesItOutOfEveryZone(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let owner = harness.owner
        let home = try store.addHome(named: "Home", as: owner)
        let kitchen = try store.addRoom(named: "Kitchen", to: home.id, as: owner)
        let downstairs = try store.addZone(named: "Downstairs", to: home.id, as: owner)
        let front = try store.addZone(named: "Front", to: home.id, as: owner)
        try store.addRoom(kitchen.id, toZone: downstairs.id, as: owner)
        try store.addRoom(kitchen.id, toZone: front.id, as: owner)
        let lamp = try store.addAccessory(Accessories.bulb(), to: home.id, as: owner)[0]
        #expect(lamp.room == home.roomForEntireHome)
        try store.assignAccessory(lamp.id, to: kitchen.id, as: owner)
        let before = store.homes[home.id]!.revision
        try store.removeRoom(kitchen.id, as: owner)
        #expect(store.accessories[lamp.id]?.room == home.roomForEntireHome)
        #expect(store.zones[downstairs.id]?.rooms == [])
        #expect(store.zones[front.id]?.rooms == [])
        store.waitForCommits()
        guard case .changes(let changes) = try store.changes(in: home.id, after: before, as: owner) else {
            Issue.record("expected changes")
            return
        }
        #expect(
            changes.map(\.event.kind) == [
                .roomForAccessoryUpdated, .roomRemovedFromZone, .roomRemovedFromZone, .roomRemoved,
            ]
        )
        try harness.reopen()
        #expect(harness.store.accessories[lamp.id]?.room == home.roomForEntireHome)
        #expect(harness.store.rooms[kitchen.id] == nil)
    }

    /// The large tables are read in key order (random ids) and put back in creation order by the
    /// loader: with this many objects, any list left in key order would differ.
    @Test(arguments: StoreKind.allCases)
    func listsComeBackInCreationOrderAfterReopening(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let owner = harness.owner
        let home = try harness.store.addHome(named: "Home", as: owner)
        for number in 0..<12 {
            _ = try harness.store.addAccessory(Accessories.bulb("Lamp \(number)"), to: home.id, as: owner)
        }
        let bridged = (0..<12).map { Accessories.sensor("Sensor \($0)") }
        let bridge = try harness.store.addAccessory(Accessories.bridge(behind: bridged), to: home.id, as: owner)[0]
        func lists(_ store: HomeStore) -> [[UniqueIdentifier]] {
            let accessories = store.homes[home.id]!.accessories
            return [accessories.map(\.raw), store.accessories[bridge.id]!.bridgedAccessories.map(\.raw)]
                + accessories.map { store.accessories[$0]!.services.map(\.raw) }
                + accessories.flatMap { store.accessories[$0]!.services }.map {
                    store.services[$0]!.characteristics.map(\.raw)
                }
        }
        let before = lists(harness.store)
        #expect(before[0].count == 25 && before[1].count == 12)
        try harness.reopen()
        #expect(lists(harness.store) == before)
    }

    @Test(arguments: StoreKind.allCases)
    func bridgesAddAnnounceAndRemoveTheirBridgedAccessories(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let owner = harness.owner
        let home = try store.addHome(named: "Home", as: owner)
        let added = try store.addAccessory(
            Accessories.bridge(behind: [Accessories.bulb("Porch"), Accessories.sensor()]),
            to: home.id,
            as: owner
        )
        let (bridge, porch, sensor) = (added[0], added[1], added[2])
        #expect(store.accessories[bridge.id]?.bridgedAccessories == [porch.id, sensor.id])
        #expect(porch.bridge == bridge.id)
        store.waitForCommits()
        guard case .changes(let changes) = try store.changes(in: home.id, after: 2, as: owner) else {
            Issue.record("expected changes")
            return
        }
        #expect(changes.map(\.event.kind) == [.accessoryAdded, .accessoryAdded])
        #expect(changes.map(\.event.object) == [porch.id.raw, sensor.id.raw])

        let garage = try store.addRoom(named: "Garage", to: home.id, as: owner)
        try store.assignAccessory(bridge.id, to: garage.id, as: owner)
        #expect(store.accessories[porch.id]?.room == home.roomForEntireHome)
        #expect(codeThrown { try store.removeAccessory(porch.id, as: owner) } == .cannotRemoveNonBridgeAccessory)
        try harness.reopen()
        let reopened = harness.store
        #expect(reopened.accessories[bridge.id]?.bridgedAccessories == [porch.id, sensor.id])
        try reopened.removeAccessory(bridge.id, as: owner)
        #expect(reopened.accessories.isEmpty && reopened.services.isEmpty && reopened.characteristics.isEmpty)
        #expect(reopened.homes[home.id]?.accessories == [])
        try harness.reopen()
        #expect(harness.store.accessories.isEmpty && harness.store.characteristics.isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func collidingAccessoryNamesGetANumber(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let home = try harness.store.addHome(named: "Home", as: harness.owner)
        let names = try (0..<3).map { _ in
            try harness.store.addAccessory(Accessories.bulb("Lamp"), to: home.id, as: harness.owner)[0].name
        }
        #expect(names == ["Lamp", "Lamp 2", "Lamp 3"])
        #expect(
            codeThrown { _ = try harness.store.addAccessory(Accessories.bulb("Lamp!"), to: home.id, as: harness.owner) }
                == .nameContainsProhibitedCharacters
        )
    }

    @Test(arguments: StoreKind.allCases)
    func valuesAreWrittenReadReportedAndKept(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let owner = harness.owner
        let home = try store.addHome(named: "Home", as: owner)
        let lamp = try store.addAccessory(Accessories.bulb(), to: home.id, as: owner)[0]
        let sensor = try store.addAccessory(Accessories.sensor(), to: home.id, as: owner)[0]
        let brightness = store.characteristic(ofType: Accessories.brightness, on: lamp.id)
        let temperature = store.characteristic(ofType: Accessories.currentTemperature, on: sensor.id)
        #expect(try store.readValue(brightness.id, as: owner).value == .int(50))
        harness.clock.advance(by: 1000)
        let written = try store.writeValue(brightness.id, .int(75), as: owner)
        #expect(written == CharacteristicCache.Entry(value: .int(75), updatedAt: harness.clock.now))
        try store.reportValue(temperature.id, .float(22.5), by: sensor.id)
        #expect(codeThrown { try store.reportValue(temperature.id, .float(23), by: lamp.id) } == .notFound)
        #expect(
            codeThrown { try store.reportValue(temperature.id, .float(1000), by: sensor.id) }
                == .accessorySentInvalidResponse
        )
        let slot = try store.readableSlot(temperature.id, as: owner)
        #expect(store.cache[slot].value == .float(22.5))
        try harness.reopen()
        #expect(try harness.store.readValue(brightness.id, as: owner).entry == written)
        #expect(try harness.store.readValue(temperature.id, as: owner).value == .float(22.5))
    }

    @Test(arguments: StoreKind.allCases)
    func actionSetsExecuteEveryActionAndReportEachResult(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let owner = harness.owner
        let home = try store.addHome(named: "Home", as: owner)
        let lamp = try store.addAccessory(Accessories.bulb(), to: home.id, as: owner)[0]
        let bridged = try store.addAccessory(
            Accessories.bridge(behind: [Accessories.bulb("Porch")]),
            to: home.id,
            as: owner
        )
        let porch = bridged[1]
        let evening = try store.addActionSet(named: "Evening", to: home.id, as: owner)
        #expect(codeThrown { _ = try store.executeActionSet(evening.id, as: owner) } == .noActionsInActionSet)
        let lampOn = CharacteristicWriteAction(
            characteristic: store.characteristic(ofType: Accessories.on, on: lamp.id).id,
            targetValue: .bool(true)
        )
        let porchOn = CharacteristicWriteAction(
            characteristic: store.characteristic(ofType: Accessories.on, on: porch.id).id,
            targetValue: .bool(true)
        )
        try store.addAction(lampOn, to: evening.id, as: owner)
        try store.addAction(porchOn, to: evening.id, as: owner)
        let success = try store.executeActionSet(evening.id, as: owner)
        #expect(success.error == nil && success.results.count == 2)
        #expect(try store.readValue(lampOn.characteristic, as: owner).value == .bool(true))
        #expect(store.actionSets[evening.id]?.lastExecutionDate == harness.clock.now)

        try store.setReachable(bridged[0].id, false)
        let partial = try store.executeActionSet(evening.id, as: owner)
        #expect(partial.error?.code == .actionSetExecutionPartialSuccess)
        #expect(partial.results.first { $0.action == porchOn.id }?.error?.code == .bridgedAccessoryNotReachable)
        try store.setReachable(lamp.id, false)
        #expect(try store.executeActionSet(evening.id, as: owner).error?.code == .actionSetExecutionFailed)
        try harness.reopen()
        #expect(harness.store.actionSets[evening.id]?.actions == [lampOn, porchOn])
    }

    @Test(arguments: StoreKind.allCases)
    func everythingSurvivesAReopen(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let owner = harness.owner
        let guest = try harness.account("Guest")
        let home = try store.addHome(named: "Home", as: owner)
        try store.addUser(guest, to: home.id, role: .guest, as: owner)
        let bedroom = try store.addRoom(named: "卧室", to: home.id, as: owner)
        let zone = try store.addZone(named: "Upstairs", to: home.id, as: owner)
        try store.addRoom(bedroom.id, toZone: zone.id, as: owner)
        let lamp = try store.addAccessory(Accessories.bulb(), to: home.id, as: owner)[0]
        try store.addAccessory(Accessories.bridge(behind: [Accessories.sensor()]), to: home.id, as: owner)
        try store.assignAccessory(lamp.id, to: bedroom.id, as: owner)
        try store.renameService(lamp.services[0], to: "Reading Light", as: owner)
        let group = try store.addServiceGroup(named: "Lights", to: home.id, as: owner)
        try store.addService(lamp.services[0], toGroup: group.id, as: owner)
        let actionSet = try store.addActionSet(named: "Night", to: home.id, as: owner)
        let brightness = store.characteristic(ofType: Accessories.brightness, on: lamp.id)
        try store.addAction(
            CharacteristicWriteAction(characteristic: brightness.id, targetValue: .int(10)),
            to: actionSet.id,
            as: owner
        )
        let trigger = try store.addTrigger(
            named: "Dusk",
            fireDate: harness.clock.now + 3_600_000,
            recurrence: .days(1),
            to: home.id,
            as: owner
        )
        try store.addActionSet(actionSet.id, toTrigger: trigger.id, as: owner)
        try store.enableTrigger(trigger.id, true, as: owner)
        try store.writeValue(brightness.id, .int(33), as: guest)
        let snapshot = StoreSnapshot(store)
        try harness.reopen()
        #expect(StoreSnapshot(harness.store) == snapshot)
        #expect(harness.store.homes(of: guest).map(\.id) == [home.id])
        #expect(harness.store.homes(of: owner).map(\.id) == [home.id])
        // The namespace is rebuilt too.
        #expect(
            codeThrown { _ = try harness.store.addRoom(named: "Lights", to: home.id, as: owner) }
                == .objectWithSimilarNameExistsInHome
        )
    }

    @Test(arguments: StoreKind.allCases)
    func removingAHomeRemovesEverythingInItForEveryMember(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let owner = harness.owner
        let guest = try harness.account("Guest")
        let home = try store.addHome(named: "Home", as: owner)
        try store.addUser(guest, to: home.id, role: .administrator, as: owner)
        try store.setPrimaryHome(home.id, as: guest)
        try store.addAccessory(Accessories.bridge(behind: [Accessories.bulb()]), to: home.id, as: owner)
        _ = try store.addRoom(named: "Hall", to: home.id, as: owner)
        var removed: [ChangeKind] = []
        store.changeObserver = { removed.append($0.event.kind) }
        #expect(try store.removeHome(home.id, as: owner) == .removed)
        store.waitForCommits()
        #expect(removed.last == .homeRemoved)
        #expect(store.homes.isEmpty && store.rooms.isEmpty && store.accessories.isEmpty && store.actionSets.isEmpty)
        #expect(store.accounts[guest]?.primaryHome == nil)
        #expect(store.homes(of: owner).isEmpty)
        try harness.reopen()
        #expect(harness.store.homes.isEmpty && harness.store.characteristics.isEmpty)
        #expect(codeThrown { _ = try harness.store.changes(in: home.id, after: 0, as: owner) } == .notFound)
        if kind == .file {
            // Not even the removal's own event is left in the file.
            #expect(try Database(path: harness.path).scalar("SELECT count(*) FROM event_batch")?.integer == 0)
        }
    }

    /// Observers and callbacks wait for their batch alike: each is told once, when its batch is
    /// committed, in the order they asked; one asking about a batch already durable is told at once.
    @Test(arguments: StoreKind.allCases)
    func commitObserversAreToldInTurnWithTheCallbacks(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        var order: [String] = []
        let home = try store.addHome(named: "Home", as: harness.owner)
        let first = store.currentTicket
        let early = CommitRecorder()
        early.onCommit = { order.append("early") }
        store.whenCommitted(first, notify: early)
        store.whenCommitted(first) { _ in order.append("callback") }
        _ = try store.addRoom(named: "Hall", to: home.id, as: harness.owner)
        let late = CommitRecorder()
        late.onCommit = { order.append("late") }
        store.whenCommitted(store.currentTicket, notify: late)
        #expect(order.isEmpty)
        #expect(store.waitForCommits() == nil)
        #expect(order == ["early", "callback", "late"])
        #expect(early.told.count == 1 && early.told[0] == nil && late.told.count == 1)
        let again = CommitRecorder()
        store.whenCommitted(first, notify: again)
        #expect(again.told.count == 1 && again.told[0] == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func changesArePublishedOnlyAfterTheirCommit(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        var published: [UInt64] = []
        store.changeObserver = { published.append($0.revision) }
        var acknowledged = false
        let home = try store.addHome(named: "Home", as: harness.owner)
        store.afterCommit { failure in
            #expect(failure == nil)
            acknowledged = true
        }
        #expect(store.waitForCommits() == nil)
        #expect(acknowledged)
        #expect(published == [1, 2])
        _ = try store.addRoom(named: "Hall", to: home.id, as: harness.owner)
        store.waitForCommits()
        #expect(published == [1, 2, 3])
    }
}

/// What the accessory links and the trigger scheduler will call.
@Suite struct AccessorySideTests {
    @Test(arguments: StoreKind.allCases)
    func notificationsResetWhenTheAccessoryBecomesUnreachable(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let home = try store.addHome(named: "Home", as: harness.owner)
        let lamp = try store.addAccessory(Accessories.bulb(), to: home.id, as: harness.owner)[0]
        let on = store.characteristic(ofType: Accessories.on, on: lamp.id).id
        try store.enableNotification(on, true, as: harness.owner)
        #expect(store.isNotificationEnabled(on, for: harness.owner))
        try store.setReachable(lamp.id, false)
        #expect(!store.isNotificationEnabled(on, for: harness.owner))
        #expect(codeThrown { try store.enableNotification(on, true, as: harness.owner) } == .accessoryNotReachable)
        try store.setReachable(lamp.id, true)
        try store.enableNotification(on, true, as: harness.owner)
        try store.enableNotification(on, false, as: harness.owner)
        #expect(!store.isNotificationEnabled(on, for: harness.owner))
    }

    @Test(arguments: StoreKind.allCases)
    func anAccessoryReportsOnlyForItselfAndWhatIsBehindIt(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let home = try store.addHome(named: "Home", as: harness.owner)
        let added = try store.addAccessory(
            Accessories.bridge(behind: [Accessories.bulb("Porch")]),
            to: home.id,
            as: harness.owner
        )
        let lamp = try store.addAccessory(Accessories.bulb(), to: home.id, as: harness.owner)[0]
        try store.updateFirmwareVersion(added[1].id, to: "2.0", by: added[0].id)
        #expect(codeThrown { try store.updateFirmwareVersion(added[1].id, to: "3.0", by: lamp.id) } == .notFound)
        #expect(codeThrown { try store.updateFirmwareVersion(lamp.id, to: "3.0", by: added[0].id) } == .notFound)
        try harness.reopen()
        #expect(harness.store.accessories[added[1].id]?.firmwareVersion == "2.0")
        guard case .changes(let changes) = try harness.store.changes(in: home.id, after: 0, as: harness.owner) else {
            Issue.record("expected changes")
            return
        }
        #expect(changes.last?.event == ChangeEvent(.firmwareVersionUpdated, object: added[1].id.raw, name: "2.0"))
        #expect(changes.last?.initiator == .accessory(added[0].id))
    }

    @Test(arguments: StoreKind.allCases)
    func firingRecordsTheDateAndDisablesAOneShotTrigger(kind: StoreKind) throws {
        let fixture = try RulesFixture(kind)
        let store = fixture.store
        let oneShot = try fixture.trigger()
        let daily = try store.addTrigger(
            named: "Daily",
            fireDate: fixture.now + 60_000,
            recurrence: .days(1),
            to: fixture.home.id,
            as: fixture.owner
        )
        for trigger in [oneShot, daily] {
            try store.addActionSet(fixture.evening.id, toTrigger: trigger.id, as: fixture.owner)
            try store.enableTrigger(trigger.id, true, as: fixture.owner)
            try store.recordFiring(of: trigger.id, at: fixture.now)
        }
        try fixture.harness.reopen()
        let reopened = fixture.harness.store
        #expect(reopened.triggers[oneShot.id]?.isEnabled == false)
        #expect(reopened.triggers[daily.id]?.isEnabled == true)
        #expect(reopened.triggers[daily.id]?.lastFireDate == fixture.now)
    }
}
