import Foundation
import SQLite
import Testing

@testable import HomeService

/// Files of every earlier schema version open at the current one, their data carried over.
@Suite struct PersistenceMigrationTests {
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
        try Self.undoTokenLimits(in: database)
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
        try Self.undoTokenLimits(in: database)
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

    /// Version 8's tokens had no name, scope, homes, expiry or last use: they load unlimited.
    @Test func aVersion8FilesTokensLoadUnlimited() throws {
        let harness = try StoreHarness(.file)
        let guest = try harness.account("Guest")
        let (token, secret) = try harness.store.issueToken(for: guest, by: guest, within: .unlimited)
        harness.store.waitForCommits()
        let database = try Database(path: harness.path)
        try Self.undoTokenLimits(in: database)
        try database.execute("PRAGMA user_version = 8")
        try harness.reopen()
        let loaded = try #require(harness.store.token(forSecret: secret))
        #expect(loaded.id == token.id && loaded.name.isEmpty && loaded.limits == .unlimited && loaded.lastUsedAt == 0)
        #expect(try database.scalar("PRAGMA user_version")?.integer == Int64(StoreSchema.currentVersion))
    }

    /// Undoes migration 9: tokens without limits.
    static func undoTokenLimits(in database: Database) throws {
        for column in ["name", "scope", "homes", "expires_at", "last_used_at"] {
            try database.execute("ALTER TABLE token DROP COLUMN \(column)")
        }
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
        try Self.undoTokenLimits(in: database)
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
        try Self.undoTokenLimits(in: database)
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
        try Self.undoTokenLimits(in: database)
        try database.execute("PRAGMA user_version = 4")
        let reopened = try HomeStore.open(.file(path: harness.path))
        #expect(StoreSnapshot(reopened) == before)
        #expect(reopened.characteristicKinds.count == kinds)
        #expect(try database.scalar("SELECT count(*) FROM characteristic_kind")?.integer == Int64(kinds))
        // Characteristics of one kind share one instance again.
        let onOfBothLamps = reopened.characteristics.values.filter { $0.type == Accessories.on }
        #expect(onOfBothLamps.count == 2 && onOfBothLamps[0].kind === onOfBothLamps[1].kind)
    }
}
