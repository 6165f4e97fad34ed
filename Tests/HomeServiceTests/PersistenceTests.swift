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
            DROP TABLE idempotency_key;
            ALTER TABLE accessory DROP COLUMN credential_hash;
            PRAGMA user_version = 1;
            """
        )
        let reopened = try HomeStore.open(.file(path: harness.path))
        #expect(reopened.triggers[trigger.id]?.recurrence == .minutes(60))
        #expect(reopened.homes[home.id]?.timeZone == "UTC")
        #expect(try database.scalar("PRAGMA user_version")?.integer == Int64(StoreSchema.currentVersion))
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

    /// Storage whose commits start failing on demand.
    final class FailingStorage: StoreBackend, @unchecked Sendable {
        let inner = InMemoryStorage()
        let failing = Mutex(false)

        func apply(_ changes: [StoreChange]) throws(StoreError) -> CommitTiming {
            if failing.withLock({ $0 }) { throw .database("disk I/O error (simulated)") }
            return try inner.apply(changes)
        }

        func forEachRow(of table: StoreTable, _ body: (any StoredRow) throws(StoreError) -> Void) throws(StoreError) {
            try inner.forEachRow(of: table, body)
        }
    }

    @Test func afterAFailedCommitNothingIsAcknowledgedAndNoChangeIsAccepted() throws {
        let storage = FailingStorage()
        let store = HomeStore(backend: storage, configuration: HomeStore.Configuration(), onCommit: { _ in })
        try StoreLoader(store: store, backend: storage).load()
        _ = store.createOwner()
        let owner = store.owner!.id
        let home = try store.addHome(named: "Home", as: owner)
        #expect(store.waitForCommits() == nil)

        var published: [ChangeKind] = []
        store.changeObserver = { published.append($0.event.kind) }
        storage.failing.withLock { $0 = true }
        let revision = store.homes[home.id]!.revision
        let (_, ticket) = store.write { () throws(HomeServiceError) in
            _ = try store.addRoom(named: "Kitchen", to: home.id, as: owner)
        }
        var acknowledgement: StoreError?? = .none
        store.whenCommitted(ticket) { acknowledgement = .some($0) }
        #expect(store.waitForCommits() != nil)
        #expect(acknowledgement != nil && acknowledgement! != nil, "the change was acknowledged as durable")
        #expect(published.isEmpty)
        // The failed change can never be replayed: its revision was never published.
        #expect(try store.changes(in: home.id, after: revision, as: owner) == .changes([]))
        #expect(!store.isAcceptingChanges)
        #expect(codeThrown { _ = try store.addRoom(named: "Hall", to: home.id, as: owner) } == .genericError)
        // Reads still work from memory.
        #expect(try store.home(home.id, as: owner).name == "Home")
    }
}
