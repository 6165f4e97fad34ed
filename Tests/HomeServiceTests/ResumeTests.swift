import Testing

@testable import HomeService

/// "Everything after revision N", for subscribers that come back: exact replay, resync beyond
/// retention, and the same across a reopen.
@Suite struct ResumeTests {
    /// A home (2 events: added, primary) plus `count` more mutations of mixed kinds.
    private func mutatedHome(_ harness: StoreHarness, count: Int) throws -> (Home, [ChangeKind]) {
        let store = harness.store
        let owner = harness.owner
        let home = try store.addHome(named: "Home", as: owner)
        let lamp = try store.addAccessory(Accessories.bulb(), to: home.id, as: owner)[0]
        let brightness = store.characteristic(ofType: Accessories.brightness, on: lamp.id)
        var kinds: [ChangeKind] = [.homeAdded, .primaryHomeUpdated, .accessoryAdded]
        for index in 0..<count - 1 {
            harness.clock.advance(by: 10)
            switch index % 3 {
            case 0:
                _ = try store.addRoom(named: "Room \(index)", to: home.id, as: owner)
                kinds.append(.roomAdded)
            case 1:
                try store.writeValue(brightness.id, .int(Int64(index % 100)), as: owner)
                kinds.append(.characteristicValueUpdated)
            default:
                try store.renameAccessory(lamp.id, to: "Lamp \(index)", as: owner)
                kinds.append(.accessoryNameUpdated)
            }
        }
        return (home, kinds)
    }

    private func replay(
        _ store: HomeStore,
        _ home: HomeID,
        after revision: UInt64,
        as account: AccountID
    ) throws
        -> [HomeChange]?
    {
        // Only committed changes can be replayed.
        store.waitForCommits()
        switch try store.changes(in: home, after: revision, as: account) {
        case .changes(let changes): return changes
        case .resyncNeeded: return nil
        }
    }

    @Test(arguments: StoreKind.allCases)
    func afterRevisionKReturnsExactlyTheLaterChangesInOrder(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let (home, kinds) = try mutatedHome(harness, count: 60)
        let total = UInt64(kinds.count)
        #expect(harness.store.homes[home.id]?.revision == total)
        for reopened in [false, true] {
            if reopened { try harness.reopen() }
            for k in 0...total {
                let changes = try #require(try replay(harness.store, home.id, after: k, as: harness.owner))
                #expect(changes.map(\.revision) == Array(stride(from: k + 1, through: total, by: 1)))
                #expect(changes.map(\.event.kind) == Array(kinds.dropFirst(Int(k))))
            }
            #expect(try replay(harness.store, home.id, after: total + 1, as: harness.owner) == nil)
        }
        // Revisions continue where they stopped.
        _ = try harness.store.addZone(named: "Upstairs", to: home.id, as: harness.owner)
        let next = try #require(try replay(harness.store, home.id, after: total, as: harness.owner))
        #expect(next.map(\.revision) == [total + 1])
    }

    @Test(arguments: StoreKind.allCases)
    func beyondTheCountRetentionASubscriberMustResync(kind: StoreKind) throws {
        let harness = try StoreHarness(kind, retention: EventRetention(maxEvents: 10, maxAgeMilliseconds: 3_600_000))
        let (home, kinds) = try mutatedHome(harness, count: 40)
        let total = UInt64(kinds.count)
        for reopened in [false, true] {
            if reopened { try harness.reopen() }
            for k in 0..<(total - 10) {
                #expect(try replay(harness.store, home.id, after: k, as: harness.owner) == nil, "after \(k)")
            }
            for k in (total - 10)...total {
                let changes = try #require(try replay(harness.store, home.id, after: k, as: harness.owner))
                #expect(changes.map(\.event.kind) == Array(kinds.dropFirst(Int(k))))
            }
        }
    }

    /// The event table is trimmed in steps of a 16th of the retention (here 8 events), as commits
    /// come back: it never holds more than a step (and the rest of one batch) beyond what is retained, and what it holds beyond
    /// that is not resumable, before a reopen or after.
    @Test(arguments: StoreKind.allCases)
    func theEventTableStaysWithinAStepOfTheRetention(kind: StoreKind) throws {
        let harness = try StoreHarness(kind, retention: EventRetention(maxEvents: 128, maxAgeMilliseconds: 3_600_000))
        let (home, _) = try mutatedHome(harness, count: 1)
        let lamp = try #require(try harness.store.home(home.id, as: harness.owner).accessories.first)
        let brightness = harness.store.characteristic(ofType: Accessories.brightness, on: lamp)
        for index in 0..<400 {
            try harness.store.writeValue(brightness.id, .int(Int64(index % 100)), as: harness.owner)
            harness.store.waitForCommits()
            // Trims drop whole batches (a commit's events of the home): one that reaches past the
            // trimmed revision stays, so the table may hold a step and the rest of one batch more.
            let batches = try harness.storedEventBatchSizes()
            let stored = batches.reduce(0, +)
            let bound = 128 + 8 + (batches.max() ?? 1) - 1
            #expect(stored <= bound, "\(stored) stored events after \(index + 1) writes")
        }
        let total = try harness.store.home(home.id, as: harness.owner).revision
        for reopened in [false, true] {
            if reopened { try harness.reopen() }
            #expect(try replay(harness.store, home.id, after: total - 129, as: harness.owner) == nil)
            let changes = try #require(try replay(harness.store, home.id, after: total - 128, as: harness.owner))
            #expect(changes.map(\.revision) == Array((total - 127)...total))
        }
    }

    /// Batches are numbered in the order they are written, homes mixed: a trim deletes its home's
    /// batches and no other's, whether they lie among another home's (the first 400 commits here
    /// carry an event of each home, and a trim step is 16 events) or in a run of their own (the rest).
    @Test(arguments: StoreKind.allCases)
    func aTrimDeletesOnlyItsOwnHomesBatches(kind: StoreKind) throws {
        let harness = try StoreHarness(kind, retention: EventRetention(maxEvents: 256, maxAgeMilliseconds: 3_600_000))
        let store = harness.store
        let (busy, _) = try mutatedHome(harness, count: 1)
        let quiet = try store.addHome(named: "Quiet", as: harness.owner)
        let lamp = try #require(try store.home(busy.id, as: harness.owner).accessories.first)
        let brightness = store.characteristic(ofType: Accessories.brightness, on: lamp)
        for index in 0..<800 {
            try store.writeValue(brightness.id, .int(Int64(index % 100)), as: harness.owner)
            if index < 400 { _ = try store.addRoom(named: "Room \(index)", to: quiet.id, as: harness.owner) }
            store.waitForCommits()
            // Each home's rows: its 256 retained events, a trim step (16) and the rest of a batch that
            // reaches past the trim.
            let batches = try harness.storedEventBatches()
            let bound = 2 * (256 + 16 + (batches.map(\.count).max() ?? 1) - 1)
            #expect(batches.joined().count <= bound, "after \(index + 1) commits")
            // and every event a subscriber can still resume from: the trims took none of them.
            for home in [busy.id, quiet.id] {
                let log = try #require(store.logs[home])
                let stored = batches.joined().filter { $0.home == home }.map(\.revision)
                let resumable = Array((log.oldestResumableRevision + 1)...log.currentRevision)
                #expect(stored.suffix(resumable.count) == resumable[...], "after \(index + 1) commits")
            }
        }
        for reopened in [false, true] {
            if reopened { try harness.reopen() }
            for home in [busy.id, quiet.id] {
                let total = try harness.store.home(home, as: harness.owner).revision
                #expect(try replay(harness.store, home, after: total - 257, as: harness.owner) == nil)
                let changes = try #require(try replay(harness.store, home, after: total - 256, as: harness.owner))
                #expect(changes.map(\.revision) == Array((total - 255)...total))
            }
        }
        _ = try harness.store.addRoom(named: "After", to: quiet.id, as: harness.owner)
        #expect(harness.store.waitForCommits() == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func beyondTheAgeRetentionASubscriberMustResync(kind: StoreKind) throws {
        let harness = try StoreHarness(kind, retention: EventRetention(maxEvents: 1000, maxAgeMilliseconds: 60_000))
        let (home, kinds) = try mutatedHome(harness, count: 20)
        let total = UInt64(kinds.count)
        harness.clock.advance(by: 30_000)
        _ = try harness.store.addRoom(named: "Late", to: home.id, as: harness.owner)
        #expect(try replay(harness.store, home.id, after: 0, as: harness.owner)?.count == Int(total) + 1)
        harness.clock.advance(by: 45_000)  // the first batch is now older than a minute; "Late" is not
        for reopened in [false, true] {
            if reopened { try harness.reopen() }
            #expect(try replay(harness.store, home.id, after: 0, as: harness.owner) == nil)
            #expect(try replay(harness.store, home.id, after: total - 1, as: harness.owner) == nil)
            let late = try #require(try replay(harness.store, home.id, after: total, as: harness.owner))
            #expect(late.map(\.event.kind) == [.roomAdded])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func changesCarryTheirInitiator(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let guest = try harness.account("Guest")
        let home = try store.addHome(named: "Home", as: harness.owner)
        try store.addUser(guest, to: home.id, role: .guest, as: harness.owner)
        let sensor = try store.addAccessory(Accessories.sensor(), to: home.id, as: harness.owner)[0]
        let lamp = try store.addAccessory(Accessories.bulb(), to: home.id, as: harness.owner)[0]
        let before = store.homes[home.id]!.revision
        try store.writeValue(store.characteristic(ofType: Accessories.on, on: lamp.id).id, .bool(true), as: guest)
        try store.reportValue(
            store.characteristic(ofType: Accessories.currentTemperature, on: sensor.id).id,
            .float(19.5),
            by: sensor.id
        )
        try harness.reopen()
        let changes = try #require(try replay(harness.store, home.id, after: before, as: guest))
        #expect(changes.map(\.initiator) == [.account(guest), .accessory(sensor.id)])
        #expect(changes.map(\.event.value) == [.bool(true), .float(19.5)])
        #expect(changes.map(\.time) == [harness.clock.now, harness.clock.now])
    }

    /// A change enters the replay only once committed: before that, a crash or a failed commit
    /// could give its revision to a different change.
    @Test(arguments: StoreKind.allCases)
    func onlyCommittedChangesCanBeReplayed(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let home = try store.addHome(named: "Home", as: harness.owner)
        store.waitForCommits()
        let before = store.homes[home.id]!.revision
        let (_, ticket) = store.write { () throws(HomeServiceError) in
            _ = try store.addRoom(named: "Den", to: home.id, as: harness.owner)
        }
        // Not yet handled by the store: not replayable, not acknowledged.
        #expect(try store.changes(in: home.id, after: before, as: harness.owner) == .changes([]))
        var acknowledged = false
        store.whenCommitted(ticket) { acknowledged = $0 == nil }
        #expect(!acknowledged)
        store.waitForCommits()
        #expect(acknowledged)
        let replayed = try #require(try replay(store, home.id, after: before, as: harness.owner))
        #expect(replayed.map(\.event.kind) == [.roomAdded] && replayed.map(\.revision) == [before + 1])
    }

    /// A write scope makes one batch; a mutation that throws inside it changes nothing, and the
    /// ones before it are still committed under the ticket.
    @Test(arguments: StoreKind.allCases)
    func aWriteScopeCommitsItsMutationsAsOneBatch(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let home = try store.addHome(named: "Home", as: harness.owner)
        store.waitForCommits()
        let (result, ticket) = store.write(from: SessionID(7)) { () throws(HomeServiceError) in
            _ = try store.addRoom(named: "Den", to: home.id, as: harness.owner)
            _ = try store.addRoom(named: "den", to: home.id, as: harness.owner)
        }
        #expect(codeThrown { try result.get() } == .objectWithSimilarNameExistsInHome)
        var sessions: [SessionID?] = []
        store.changeObserver = { sessions.append($0.session) }
        var acknowledged = false
        store.whenCommitted(ticket) { acknowledged = $0 == nil }
        store.waitForCommits()
        #expect(acknowledged && sessions == [SessionID(7)])
        try harness.reopen()
        #expect(harness.store.homes[home.id]!.rooms.count == 1)
    }

    /// Revisions never go back, even when retention has dropped every event but the latest.
    @Test(arguments: StoreKind.allCases)
    func revisionsSurviveAReopenWhateverTheRetentionDropped(kind: StoreKind) throws {
        let harness = try StoreHarness(kind, retention: EventRetention(maxEvents: 1, maxAgeMilliseconds: 1000))
        let (home, kinds) = try mutatedHome(harness, count: 12)
        harness.clock.advance(by: 5000)  // every event is now past the age limit
        try harness.reopen()
        #expect(harness.store.homes[home.id]?.revision == UInt64(kinds.count))
        _ = try harness.store.addZone(named: "Upstairs", to: home.id, as: harness.owner)
        let next = try #require(try replay(harness.store, home.id, after: UInt64(kinds.count), as: harness.owner))
        #expect(next.map(\.revision) == [UInt64(kinds.count) + 1])
        try harness.reopen()
        #expect(harness.store.homes[home.id]?.revision == UInt64(kinds.count) + 1)
    }
}
