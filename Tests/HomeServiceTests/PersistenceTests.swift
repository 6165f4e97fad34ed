import Foundation
import SQLite
import Synchronization
import Testing

@testable import HomeService

/// The storage underneath: schema versions, damaged data, and a commit that fails.
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

    /// Version 1 stored recurrences in seconds and homes without a time zone.
    @Test func aVersion1FileIsMigratedToCalendarRecurrences() throws {
        let harness = try StoreHarness(.file)
        let home = try harness.store.addHome(named: "Home", as: harness.owner)
        let trigger = try harness.store.addTrigger(
            named: "Hourly",
            fireDate: harness.clock.now + 3_600_000,
            recurrence: .hours(1),
            to: home.id,
            as: harness.owner
        )
        harness.store.waitForCommits()
        let database = try Database(path: harness.path)
        try database.execute(
            """
            UPDATE timer_trigger SET recurrence = 3600;
            ALTER TABLE timer_trigger DROP COLUMN recurrence_unit;
            ALTER TABLE home DROP COLUMN time_zone;
            DROP TABLE idempotency_batch;
            ALTER TABLE accessory DROP COLUMN credential_hash;
            """
        )
        try database.execute(Self.characteristicsAsInVersion4)
        try Self.undoEventBatches(in: database)
        try database.execute("PRAGMA user_version = 1")
        let reopened = try HomeStore.open(.file(path: harness.path))
        #expect(reopened.triggers[trigger.id]?.recurrence == .minutes(60))
        #expect(reopened.homes[home.id]?.timeZone == "UTC")
        #expect(try database.scalar("PRAGMA user_version")?.integer == Int64(StoreSchema.currentVersion))
    }

    /// Version 7 kept a row per idempotency key; version 8 keeps an account's keys of a commit in one
    /// row. The keys of a file written before are remembered after the migration, oldest first.
    @Test func aVersion7FileIsMigratedToIdempotencyBatches() throws {
        let harness = try StoreHarness(.file)
        let guest = try harness.account("Guest")
        harness.store.waitForCommits()
        let database = try Database(path: harness.path)
        try Self.undoIdempotencyBatches(in: database)
        try database.execute("PRAGMA user_version = 7")
        let insert = try database.prepare("INSERT INTO idempotency_key VALUES (?, ?, ?, ?, ?)")
        let now = harness.clock.now
        for (offset, key) in ["k1", "k2", "k3"].enumerated() {
            try insert.run([
                .id(harness.owner), .text(key), .blob([1]), .blob([UInt8(offset)]), .integer(now + Int64(offset)),
            ])
        }
        try insert.run([.id(guest), .text("k1"), .blob([2]), .blob([9]), .integer(now)])
        try harness.reopen()
        let store = harness.store
        #expect(
            ["k1", "k2", "k3"].map { store.idempotencyRecord(for: harness.owner, key: $0)?.outcome } == [[0], [1], [2]]
        )
        #expect(store.idempotencyRecord(for: guest, key: "k1")?.requestDigest == [2])
        #expect(try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'idempotency_key'")?.integer == 0)
        #expect(try harness.rowCount(of: StoreSchema.idempotencyBatch) == 2)
        // The account's oldest is still the first forgotten.
        let keys = (0..<(HomeStore.idempotencyKeysPerAccount - 2)).map { "new-\($0)" }
        _ = store.write { () throws(HomeServiceError) in
            for key in keys {
                try store.recordIdempotency(for: harness.owner, key: key, requestDigest: [1], outcome: [])
            }
        }
        #expect(store.idempotencyRecord(for: harness.owner, key: "k1") == nil)
        #expect(store.idempotencyRecord(for: harness.owner, key: "k2") != nil)
    }

    /// Undoes migration 8 (of a file with no idempotency records): the `idempotency_key` table of
    /// versions 3 to 7.
    static func undoIdempotencyBatches(in database: Database) throws {
        try database.execute(
            """
            DROP TABLE idempotency_batch;
            CREATE TABLE idempotency_key (account BLOB NOT NULL, key TEXT NOT NULL, request_digest BLOB NOT NULL,
                outcome BLOB NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (account, key)) WITHOUT ROWID;
            """
        )
    }

    /// Undoes migration 6: a row per event in the `event` table, as versions 1 to 5 kept them.
    static func undoEventBatches(in database: Database) throws {
        var changes: [HomeChange] = []
        try database.prepare("SELECT home, first_revision, last_revision, events FROM event_batch").forEachRow { row in
            changes += try RowCoding.changes(inBatch: row)
        }
        try database.execute(
            """
            CREATE TABLE event (home BLOB NOT NULL, revision INTEGER NOT NULL, time INTEGER NOT NULL,
                initiator BLOB NOT NULL, body BLOB NOT NULL, PRIMARY KEY (home, revision)) WITHOUT ROWID;
            DROP TABLE event_batch;
            """
        )
        let insert = try database.prepare("INSERT INTO event VALUES (?, ?, ?, ?, ?)")
        for change in changes { try insert.run(RowCoding.legacyRow(change)) }
    }

    /// Version 5 kept a row per event; version 6 keeps a commit's events of a home in one row. The
    /// events of a file written before replay the same after the migration.
    @Test func aVersion5FileIsMigratedToEventBatches() throws {
        let harness = try StoreHarness(.file)
        let store = harness.store
        let home = try store.addHome(named: "Home", as: harness.owner)
        let other = try store.addHome(named: "Other", as: harness.owner)
        let lamp = try store.addAccessory(Accessories.bulb(), to: home.id, as: harness.owner)[0]
        let brightness = store.characteristic(ofType: Accessories.brightness, on: lamp.id).id
        store.onCommitWaiting = {}
        for percent in 1...30 {
            try store.writeValue(brightness, .int(Int64(percent)), as: harness.owner)
            _ = try store.addRoom(named: "Room \(percent)", to: other.id, as: harness.owner)
            if percent % 7 == 0 { store.startQueuedCommits() }
        }
        // More events of one home in one commit than one batch row holds.
        for step in 0..<(EventBatches.maxEventsPerBatch + 40) {
            try store.writeValue(brightness, .int(Int64(step % 100)), as: harness.owner)
        }
        #expect(store.waitForCommits() == nil)
        let before = StoreSnapshot(store)
        let homeRevision = try store.home(home.id, as: harness.owner).revision
        let otherRevision = try store.home(other.id, as: harness.owner).revision
        let history = try Self.history(of: home.id, in: store, as: harness.owner)
        let otherHistory = try Self.history(of: other.id, in: store, as: harness.owner)
        let events = try harness.storedEventCount()
        #expect(try harness.rowCount(of: StoreSchema.eventBatch) < events)

        let database = try Database(path: harness.path)
        try Self.undoEventBatches(in: database)
        try Self.undoIdempotencyBatches(in: database)
        try database.execute("PRAGMA user_version = 5")
        #expect(try database.scalar("SELECT count(*) FROM event")?.integer == Int64(events))
        try harness.reopen()
        #expect(try database.scalar("PRAGMA user_version")?.integer == Int64(StoreSchema.currentVersion))
        #expect(try database.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'event'")?.integer == 0)
        #expect(try harness.storedEventCount() == events)
        #expect(StoreSnapshot(harness.store) == before)
        #expect(try harness.store.home(home.id, as: harness.owner).revision == homeRevision)
        #expect(try harness.store.home(other.id, as: harness.owner).revision == otherRevision)
        #expect(try Self.history(of: home.id, in: harness.store, as: harness.owner) == history)
        #expect(try Self.history(of: other.id, in: harness.store, as: harness.owner) == otherHistory)
        #expect(history.count > EventBatches.maxEventsPerBatch + 60 && otherHistory.count > 30)
    }

    /// Every retained change of the home (none when it needs a resync).
    /// Version 6 keyed event batches by (home, first_revision); version 7 numbers them in the order
    /// they were written. Two homes' batches, written in turns, replay the same after the migration,
    /// and the writer goes on adding and trimming them.
    @Test func aVersion6FileIsMigratedToNumberedBatches() throws {
        let harness = try StoreHarness(.file, retention: EventRetention(maxEvents: 128, maxAgeMilliseconds: 3_600_000))
        let store = harness.store
        let home = try store.addHome(named: "Home", as: harness.owner)
        let other = try store.addHome(named: "Other", as: harness.owner)
        let lamp = try store.addAccessory(Accessories.bulb(), to: home.id, as: harness.owner)[0]
        let brightness = store.characteristic(ofType: Accessories.brightness, on: lamp.id).id
        for percent in 1...40 {
            try store.writeValue(brightness, .int(Int64(percent)), as: harness.owner)
            store.waitForCommits()
            _ = try store.addRoom(named: "Room \(percent)", to: other.id, as: harness.owner)
            store.waitForCommits()
        }
        let before = StoreSnapshot(store)
        let history = try Self.history(of: home.id, in: store, as: harness.owner)
        let otherHistory = try Self.history(of: other.id, in: store, as: harness.owner)
        let batches = try harness.storedEventBatches()

        let database = try Database(path: harness.path)
        try database.execute(
            """
            CREATE TABLE event_batch_v6 (home BLOB NOT NULL, first_revision INTEGER NOT NULL,
                last_revision INTEGER NOT NULL, events BLOB NOT NULL,
                PRIMARY KEY (home, first_revision)) WITHOUT ROWID;
            INSERT INTO event_batch_v6 SELECT home, first_revision, last_revision, events FROM event_batch
                ORDER BY number DESC;
            DROP TABLE event_batch;
            ALTER TABLE event_batch_v6 RENAME TO event_batch;
            PRAGMA user_version = 6;
            """
        )
        try Self.undoIdempotencyBatches(in: database)
        try harness.reopen()
        #expect(try database.scalar("PRAGMA user_version")?.integer == Int64(StoreSchema.currentVersion))
        // Each home's batches in revision order, the homes one after the other.
        let migrated = try harness.storedEventBatches()
        #expect(migrated.count == batches.count)
        #expect(migrated.map(\.[0].home) == migrated.map(\.[0].home).sorted { $0.raw < $1.raw })
        #expect(StoreSnapshot(harness.store) == before)
        #expect(try Self.history(of: home.id, in: harness.store, as: harness.owner) == history)
        #expect(try Self.history(of: other.id, in: harness.store, as: harness.owner) == otherHistory)

        for percent in 1...100 {
            try harness.store.writeValue(brightness, .int(Int64(percent)), as: harness.owner)
            harness.store.waitForCommits()
        }
        let total = try harness.store.home(home.id, as: harness.owner).revision
        try harness.reopen()
        guard
            case .changes(let replayed) = try harness.store.changes(in: home.id, after: total - 128, as: harness.owner)
        else {
            Issue.record("the last 128 events do not replay")
            return
        }
        #expect(replayed.map(\.revision) == Array((total - 127)...total))
        #expect(try Self.history(of: other.id, in: harness.store, as: harness.owner) == otherHistory)
    }

    static func history(of home: HomeID, in store: HomeStore, as account: AccountID) throws -> [HomeChange] {
        guard case .changes(let changes) = try store.changes(in: home, after: 0, as: account) else { return [] }
        return changes
    }

    /// Undoes migration 5: each characteristic row carries its type, properties and metadata.
    static let characteristicsAsInVersion4 = """
        CREATE TABLE characteristic_v4 (id BLOB PRIMARY KEY, service BLOB NOT NULL, accessory BLOB NOT NULL,
            home BLOB NOT NULL, type TEXT NOT NULL, properties INTEGER NOT NULL, format TEXT NOT NULL, units TEXT,
            minimum REAL, maximum REAL, step REAL, max_length INTEGER, min_length INTEGER, valid_values BLOB,
            description TEXT, value BLOB, value_time INTEGER NOT NULL, sequence INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO characteristic_v4
            SELECT c.id, c.service, c.accessory, c.home, k.type, k.properties, k.format, k.units, k.minimum,
                k.maximum, k.step, k.max_length, k.min_length, k.valid_values, k.description, c.value,
                c.value_time, c.sequence
            FROM characteristic c JOIN characteristic_kind k ON k.id = c.kind;
        DROP TABLE characteristic;
        DROP TABLE characteristic_kind;
        ALTER TABLE characteristic_v4 RENAME TO characteristic;
        """

    /// Version 4 repeated each characteristic's type, properties and metadata in its row; version 5
    /// stores each distinct combination once and the rows name it.
    @Test func aVersion4FileIsMigratedToSharedCharacteristicKinds() throws {
        let harness = try StoreHarness(.file)
        let home = try harness.store.addHome(named: "Home", as: harness.owner)
        let lamps = try harness.store.addAccessory(Accessories.bulb("Lamp"), to: home.id, as: harness.owner)
        _ = try harness.store.addAccessory(Accessories.bulb("Desk Lamp"), to: home.id, as: harness.owner)
        _ = try harness.store.addAccessory(Accessories.sensor(), to: home.id, as: harness.owner)
        let lamp = lamps[0]
        let brightness = harness.store.characteristics.values.first {
            $0.accessory == lamp.id && $0.type == Accessories.brightness
        }!.id
        _ = try harness.store.writeValue(brightness, .int(70), as: harness.owner)
        harness.store.waitForCommits()
        let before = StoreSnapshot(harness.store)
        let kinds = harness.store.characteristicKinds.count
        #expect(kinds > 0 && kinds < harness.store.characteristics.count)

        let database = try Database(path: harness.path)
        try database.execute(Self.characteristicsAsInVersion4)
        try Self.undoEventBatches(in: database)
        try Self.undoIdempotencyBatches(in: database)
        try database.execute("PRAGMA user_version = 4")
        let reopened = try HomeStore.open(.file(path: harness.path))
        #expect(StoreSnapshot(reopened) == before)
        #expect(reopened.characteristicKinds.count == kinds)
        #expect(try database.scalar("SELECT count(*) FROM characteristic_kind")?.integer == Int64(kinds))
        // Characteristics of one kind share one instance again.
        let onOfBothLamps = reopened.characteristics.values.filter { $0.type == Accessories.on }
        #expect(onOfBothLamps.count == 2 && onOfBothLamps[0].kind === onOfBothLamps[1].kind)
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
