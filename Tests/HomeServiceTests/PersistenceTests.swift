import Foundation
import SQLite
import Synchronization
import Testing

@testable import HomeService

/// The storage underneath: the schema version, damaged data, and a commit that fails (earlier
/// versions: PersistenceMigrationTests).
@Suite struct PersistenceTests {
    @Test func aNewFileIsAtTheCurrentSchemaVersionInWALMode() throws {
        let harness = try StoreHarness(.file)
        harness.store.waitForCommits()
        let database = try Database(path: harness.path)
        #expect(try database.scalar("PRAGMA user_version")?.integer == Int64(StoreSchema.currentVersion))
        #expect(try database.scalar("PRAGMA journal_mode")?.text == "wal")
    }

    /// The server's mode: the file locked from the end of the load on (no other connection can
    /// read it), and a backup written by the writer thread with every change made before it was
    /// asked for, reported through the commit reports like a commit.
    @Test func aStoreThatHoldsItsFileIsCopiedByItsWriter() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("homestore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("home.sqlite").path
        let reports = Mutex<[CommitReport]>([])
        let store = try HomeStore.open(
            .file(path: path),
            configuration: HomeStore.Configuration(locksFileExclusively: true)
        ) { report in reports.withLock { $0.append(report) } }
        let owner = store.owner!.id
        let home = try store.addHome(named: "Cabin", as: owner)
        _ = try store.addRoom(named: "Loft", to: home.id, as: owner)

        let other = try Database(path: path)
        try other.execute("PRAGMA busy_timeout=0")
        #expect(throws: SQLiteError.self) { try other.scalar("SELECT count(*) FROM room") }

        let copyPath = directory.appendingPathComponent("copy.sqlite").path
        let guest = try store.createAccount(named: "Guest", by: owner).id
        #expect(throws: HomeServiceError(.insufficientPrivileges, "only the server's owner may back up the store")) {
            try store.writeCopy(to: copyPath, by: guest) { _ in }
        }
        #expect(throws: HomeServiceError.self) { try store.writeCopy(to: "copy.sqlite", by: owner) { _ in } }
        var outcomes: [Result<Int64, HomeServiceError>] = []
        try store.writeCopy(to: copyPath, by: owner) { outcomes.append($0) }
        try store.writeCopy(to: copyPath, by: owner) { outcomes.append($0) }
        store.waitForCommits()
        for report in reports.withLock({ $0 }) { store.handle(report) }
        #expect(outcomes.count == 2)
        #expect(((try? outcomes.first?.get()) ?? 0) > 0)
        if case .failure(let error) = outcomes.last {
            #expect(error.code == .alreadyExists)
        } else {
            Issue.record("a second copy over the first")
        }

        let copy = try HomeStore.open(.file(path: copyPath))
        #expect(copy.homes(of: owner).map(\.name) == ["Cabin"])
        #expect(try copy.home(home.id, as: owner).rooms == store.home(home.id, as: owner).rooms)
    }

    @Test func aStoreInMemoryHasNoFileToCopy() throws {
        let reports = Mutex<[CommitReport]>([])
        let store = try HomeStore.open(.memory(InMemoryStorage())) { report in reports.withLock { $0.append(report) } }
        var outcome: Result<Int64, HomeServiceError>?
        try store.writeCopy(to: "/tmp/never-written.sqlite", by: store.owner!.id) { outcome = $0 }
        store.waitForCommits()
        for report in reports.withLock({ $0 }) { store.handle(report) }
        if case .failure(let error) = outcome {
            #expect(error.code == .operationNotSupported)
        } else {
            Issue.record("no refusal")
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/never-written.sqlite"))
    }

    @Test func aFileFromANewerServerIsRefused() throws {
        let harness = try StoreHarness(.file)
        harness.store.waitForCommits()
        try Database(path: harness.path).execute("PRAGMA user_version = 99")
        #expect(throws: StoreError.self) { _ = try HomeStore.open(.file(path: harness.path)) }
    }

    /// The integrity check runs beside the load on its own connection; damage in a page the load
    /// never reads must still refuse the file.
    @Test func damageTheLoadDoesNotReadIsStillRefused() throws {
        let harness = try StoreHarness(.file)
        harness.store.waitForCommits()
        let pageSize: Int
        let page: Int
        do {
            let database = try Database(path: harness.path)
            try database.execute("CREATE TABLE unread (x TEXT)")
            for number in 0..<200 { try database.execute("INSERT INTO unread VALUES ('row \(number) of padding')") }
            pageSize = Int(try database.scalar("PRAGMA page_size")?.integer ?? 0)
            page = Int(try database.scalar("SELECT rootpage FROM sqlite_master WHERE name = 'unread'")?.integer ?? 0)
            _ = try database.scalar("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        #expect(pageSize > 0 && page > 1)
        _ = try HomeStore.open(.file(path: harness.path))  // undamaged: opens
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: harness.path))
        try file.seek(toOffset: UInt64((page - 1) * pageSize))
        try file.write(contentsOf: [UInt8](repeating: 0xFF, count: 16))
        try file.close()
        #expect(throws: StoreError.self) { _ = try HomeStore.open(.file(path: harness.path)) }
    }

    @Test(arguments: StoreKind.allCases)
    func aKindGoesWithItsLastCharacteristic(_ storeKind: StoreKind) throws {
        let harness = try StoreHarness(storeKind)
        let home = try harness.store.addHome(named: "Home", as: harness.owner)
        let lamp = try harness.store.addAccessory(Accessories.bulb("Lamp"), to: home.id, as: harness.owner)[0]
        let desk = try harness.store.addAccessory(Accessories.bulb("Desk Lamp"), to: home.id, as: harness.owner)[0]
        let sensor = try harness.store.addAccessory(Accessories.sensor(), to: home.id, as: harness.owner)[0]
        let kindsOfLamps = harness.store.characteristicKinds.count
        try harness.store.removeAccessory(lamp.id, as: harness.owner)
        #expect(harness.store.characteristicKinds.count == kindsOfLamps, "the desk lamp still uses them")
        try harness.store.removeAccessory(desk.id, as: harness.owner)
        try harness.store.removeAccessory(sensor.id, as: harness.owner)
        #expect(harness.store.characteristicKinds.count == 0)
        harness.store.waitForCommits()
        let reopened = try HomeStore.open(harness.location)
        #expect(reopened.characteristicKinds.count == 0)
        var storedKinds = 0
        switch harness.location {
        case .memory(let storage):
            try storage.forEachRow(of: StoreSchema.characteristicKind) { _ in storedKinds += 1 }
        case .file(let path):
            storedKinds = Int(
                try Database(path: path).scalar("SELECT count(*) FROM characteristic_kind")?.integer ?? -1
            )
        }
        #expect(storedKinds == 0)
    }

    /// A kind row that no characteristic names (its deletion lost in a crash) is deleted at start-up.
    @Test func anUnusedKindRowIsDeletedAtStartUp() throws {
        let harness = try StoreHarness(.file)
        let home = try harness.store.addHome(named: "Home", as: harness.owner)
        _ = try harness.store.addAccessory(Accessories.bulb(), to: home.id, as: harness.owner)
        harness.store.waitForCommits()
        let kinds = harness.store.characteristicKinds.count
        let database = try Database(path: harness.path)
        try database.execute(
            "INSERT INTO characteristic_kind (id, type, properties, format) VALUES (999, 'FF', 1, 'bool')"
        )
        let reopened = try HomeStore.open(.file(path: harness.path))
        reopened.waitForCommits()
        #expect(reopened.characteristicKinds.count == kinds)
        #expect(try database.scalar("SELECT count(*) FROM characteristic_kind WHERE id = 999")?.integer == 0)
    }

    @Test func aCharacteristicOfAMissingKindStopsTheLoad() throws {
        let harness = try StoreHarness(.file)
        let home = try harness.store.addHome(named: "Home", as: harness.owner)
        let lamp = try harness.store.addAccessory(Accessories.bulb(), to: home.id, as: harness.owner)[0]
        harness.store.waitForCommits()
        let on = harness.store.characteristics.values.first { $0.accessory == lamp.id && $0.type == Accessories.on }!.id
        try Database(path: harness.path).prepare("UPDATE characteristic SET kind = 999 WHERE id = ?")
            .run([.blob(on.raw.bytes)])
        #expect(throws: StoreError.corrupt("characteristic \(on) has kind 999, which does not exist")) {
            _ = try HomeStore.open(.file(path: harness.path))
        }
    }

    @Test func danglingReferencesStopTheLoadWithTheirName() throws {
        let harness = try StoreHarness(.file)
        let home = try harness.store.addHome(named: "Home", as: harness.owner)
        let kitchen = try harness.store.addRoom(named: "Kitchen", to: home.id, as: harness.owner)
        let lamp = try harness.store.addAccessory(Accessories.bulb(), to: home.id, as: harness.owner)[0]
        try harness.store.assignAccessory(lamp.id, to: kitchen.id, as: harness.owner)
        harness.store.waitForCommits()
        try Database(path: harness.path).prepare("DELETE FROM room WHERE id = ?").run([.blob(kitchen.id.raw.bytes)])
        do {
            _ = try HomeStore.open(.file(path: harness.path))
            Issue.record("a store with an accessory in a missing room opened")
        } catch {
            #expect(error == .corrupt("accessory \(lamp.id) is in no room"))
        }
    }

    @Test func undecodableFieldsStopTheLoad() throws {
        let harness = try StoreHarness(.file)
        let home = try harness.store.addHome(named: "Home", as: harness.owner)
        let zone = try harness.store.addZone(named: "Upstairs", to: home.id, as: harness.owner)
        harness.store.waitForCommits()
        try Database(path: harness.path).prepare("UPDATE zone SET rooms = ? WHERE id = ?")
            .run([.blob([1, 2, 3]), .blob(zone.id.raw.bytes)])
        #expect(throws: StoreError.corrupt("an id list of 3 bytes")) {
            _ = try HomeStore.open(.file(path: harness.path))
        }
    }

    /// In-memory storage that counts its commits, keeps the last one's changes, and can be made to
    /// fail them.
    final class InstrumentedStorage: StoreBackend, @unchecked Sendable {
        let inner = InMemoryStorage()
        let failing = Mutex(false)
        let commits = Mutex(0)
        let lastCommit = Mutex<[StoreChange]>([])

        func apply(_ changes: [StoreChange]) throws(StoreError) -> CommitTiming {
            commits.withLock { $0 += 1 }
            lastCommit.withLock { $0 = changes }
            if failing.withLock({ $0 }) { throw .database("disk I/O error (simulated)") }
            return try inner.apply(changes)
        }

        func forEachRow(of table: StoreTable, _ body: (any StoredRow) throws(StoreError) -> Void) throws(StoreError) {
            try inner.forEachRow(of: table, body)
        }

        func rowCount(of table: StoreTable) throws(StoreError) -> Int { try inner.rowCount(of: table) }

        func makeReader() throws(StoreError) -> any TableReader { inner }

        func writeCopy(to path: String) throws(HomeServiceError) -> Int64 { try inner.writeCopy(to: path) }

        /// A store on a new instrumented storage, loaded, with its owner.
        static func storeWithOwner() throws -> (InstrumentedStorage, HomeStore, AccountID) {
            let storage = InstrumentedStorage()
            let store = HomeStore(backend: storage, configuration: HomeStore.Configuration(), onCommit: { _ in })
            try StoreLoader(store: store, backend: storage).load()
            _ = store.createOwner()
            return (storage, store, store.owner!.id)
        }
    }

    /// With `onCommitWaiting` set (a server starts commits when its loop is about to poll), batches
    /// wait for ``HomeStore/startQueuedCommits()`` and share the commit it starts; waiting for
    /// commits starts them too, so a shutdown never strands one.
    @Test func batchesWaitForTheirCommitToBeStartedAndShareIt() throws {
        let (storage, store, owner) = try InstrumentedStorage.storeWithOwner()
        #expect(store.waitForCommits() == nil)
        let before = storage.commits.withLock { $0 }
        var requests = 0
        store.onCommitWaiting = { requests += 1 }

        let home = try store.addHome(named: "Home", as: owner)
        _ = try store.addRoom(named: "Kitchen", to: home.id, as: owner)
        #expect(requests == 1)
        // Nothing went to the writer: the store has submitted no batch (no need to wait and see).
        #expect(!store.hasCommitInFlight, "a batch went to the writer before a commit was asked for")
        #expect(storage.commits.withLock { $0 } == before, "a commit started before it was asked for")
        store.startQueuedCommits()
        #expect(store.waitForCommits() == nil)
        #expect(storage.commits.withLock { $0 } == before + 1)

        _ = try store.addRoom(named: "Hall", to: home.id, as: owner)
        #expect(requests == 2)
        #expect(store.waitForCommits() == nil)
        #expect(storage.commits.withLock { $0 } == before + 2)
        #expect(try storage.rowCount(of: StoreSchema.room) == 3)
    }

    /// Rows that several mutations of one batch touch go to the writer once each, as they are when
    /// the batch is submitted: ten renames of a room are one row with the last name (and ten
    /// events); a room added, renamed and removed in the batch is one delete. A reopen loads the same.
    @Test func aRowTouchedByManyMutationsOfABatchIsWrittenOnceAsItEnds() throws {
        let (storage, store, owner) = try InstrumentedStorage.storeWithOwner()
        let home = try store.addHome(named: "Home", as: owner)
        let kitchen = try store.addRoom(named: "Kitchen", to: home.id, as: owner)
        #expect(store.waitForCommits() == nil)
        store.onCommitWaiting = {}

        for round in 1...10 { try store.renameRoom(kitchen.id, to: "Kitchen \(round)", as: owner) }
        let hall = try store.addRoom(named: "Hall", to: home.id, as: owner)
        try store.renameRoom(hall.id, to: "Long Hall", as: owner)
        try store.removeRoom(hall.id, as: owner)
        store.startQueuedCommits()
        #expect(store.waitForCommits() == nil)

        let changes = storage.lastCommit.withLock { $0 }
        var roomUpserts: [[SQLValue]] = []
        var roomDeletes: [[SQLValue]] = []
        var events = 0
        for change in changes {
            switch change {
            case .upsert(let table, let row) where table.name == StoreSchema.room.name: roomUpserts.append(row)
            case .delete(let table, let key) where table.name == StoreSchema.room.name: roomDeletes.append(key)
            case .event: events += 1
            default: break
            }
        }
        #expect(roomUpserts.count == 1)
        #expect(roomUpserts.first?.first == .blob(kitchen.id.raw.bytes))
        #expect(roomUpserts.first?.contains(.text("Kitchen 10")) == true)
        #expect(roomDeletes == [[.blob(hall.id.raw.bytes)]])
        #expect(events == 13)
        let reopened = HomeStore(backend: storage, configuration: HomeStore.Configuration(), onCommit: { _ in })
        try StoreLoader(store: reopened, backend: storage).load()
        #expect(StoreSnapshot(reopened) == StoreSnapshot(store))
        #expect(try reopened.room(kitchen.id, as: owner).name == "Kitchen 10")
    }

    /// A value written again before its commit is written once, with its last value; an earlier one
    /// is skipped only when a later value write of the same characteristic follows it.
    @Test func onlyTheLastValueOfACharacteristicInACommitIsWritten() {
        let lamp = UniqueIdentifier(high: 1, low: 1)
        let desk = UniqueIdentifier(high: 2, low: 2)
        func value(_ id: UniqueIdentifier, _ number: Int64) -> StoreChange {
            .setValue(characteristic: id, value: .int(number), time: number)
        }
        let changes: [StoreChange] = [
            value(lamp, 1), value(desk, 1), .delete(StoreSchema.room, key: [.blob(lamp.bytes)]), value(lamp, 2),
            .setReachable(accessory: lamp.bytes, reachable: true), value(lamp, 3),
        ]
        #expect(changes.overwrittenValueWrites() == [true, false, false, true, false, false])
        #expect([value(lamp, 1), value(desk, 2)].overwrittenValueWrites() == nil)
        #expect([StoreChange]().overwrittenValueWrites() == nil)
    }

    /// Many writes of one characteristic in one group commit: the file keeps the last value and
    /// every event, and a reopen loads the same.
    @Test func aCommitOfManyWritesOfOneValueKeepsTheLastAndEveryEvent() throws {
        let harness = try StoreHarness(.file)
        let store = harness.store
        let home = try store.addHome(named: "Home", as: harness.owner)
        let lamp = try store.addAccessory(Accessories.bulb(), to: home.id, as: harness.owner)[0]
        let brightness = store.characteristic(ofType: Accessories.brightness, on: lamp.id).id
        store.waitForCommits()
        let eventsBefore = try harness.storedEventCount()
        let batchesBefore = try harness.rowCount(of: StoreSchema.eventBatch)
        store.onCommitWaiting = {}
        for percent in 1...40 { try store.writeValue(brightness, .int(Int64(percent)), as: harness.owner) }
        store.startQueuedCommits()
        #expect(store.waitForCommits() == nil)
        let database = try Database(path: harness.path)
        let stored = try database.prepare("SELECT value FROM characteristic WHERE id = ?")
            .query([.blob(brightness.raw.bytes)])
        #expect(stored.first?.first == RowCoding.value(.int(40)))
        #expect(try harness.storedEventCount() == eventsBefore + 40)
        // One commit, one home: its 40 events share a row.
        #expect(try harness.rowCount(of: StoreSchema.eventBatch) == batchesBefore + 1)
        let before = StoreSnapshot(store)
        try harness.reopen()
        #expect(StoreSnapshot(harness.store) == before)
        #expect(try harness.store.readValue(brightness, as: harness.owner).value == .int(40))
    }

    @Test func afterAFailedCommitNothingIsAcknowledgedAndNoChangeIsAccepted() throws {
        let (storage, store, owner) = try InstrumentedStorage.storeWithOwner()
        let home = try store.addHome(named: "Home", as: owner)
        #expect(store.waitForCommits() == nil)

        var published: [ChangeKind] = []
        store.changeObserver = { published.append($0.event.kind) }
        var failures: [StoreError] = []
        store.onFailure = { failures.append($0) }
        storage.failing.withLock { $0 = true }
        let revision = store.homes[home.id]!.revision
        let (_, ticket) = store.write { () throws(HomeServiceError) in
            _ = try store.addRoom(named: "Kitchen", to: home.id, as: owner)
        }
        var acknowledgement: StoreError?? = .none
        store.whenCommitted(ticket) { acknowledgement = .some($0) }
        let observer = CommitRecorder()
        store.whenCommitted(ticket, notify: observer)
        #expect(store.waitForCommits() != nil)
        #expect(acknowledgement != nil && acknowledgement! != nil, "the change was acknowledged as durable")
        #expect(observer.told.count == 1 && observer.told[0] != nil, "the observer was told it is durable")
        #expect(published.isEmpty)
        // The failed change can never be replayed: its revision was never published.
        #expect(try store.changes(in: home.id, after: revision, as: owner) == .changes([]))
        #expect(!store.isAcceptingChanges)
        #expect(codeThrown { _ = try store.addRoom(named: "Hall", to: home.id, as: owner) } == .genericError)
        store.waitForCommits()
        // Told once, when it happened.
        #expect(failures.count == 1 && failures.first == acknowledgement!!)
        // Reads still work from memory.
        #expect(try store.home(home.id, as: owner).name == "Home")
    }
}

/// Records what ``HomeStore/whenCommitted(_:notify:)`` tells it.
final class CommitRecorder: CommitObserver {
    private(set) var told: [StoreError?] = []
    var onCommit: () -> Void = {}

    func committed(_ failure: StoreError?) {
        told.append(failure)
        onCommit()
    }
}
