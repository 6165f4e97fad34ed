import Foundation
import SQLite
import Testing

/// Thrown by a test to abandon a transaction.
private struct Abort: Error {}

/// Every test runs against an in-memory database and a file on disk.
@Suite struct DatabaseTests {
    enum Backend: String, CaseIterable, Sendable {
        case memory
        case file
    }

    /// Opens a fresh database of `backend`; the file (and its WAL) is removed afterwards.
    func withDatabase(_ backend: Backend, _ body: (Database) throws -> Void) throws {
        switch backend {
        case .memory:
            try body(try Database(path: ":memory:"))
        case .file:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "homerpc-\(UUID().uuidString).sqlite"
            ).path
            defer {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
            try body(try Database(path: path))
        }
    }

    @Test(arguments: Backend.allCases)
    func valuesOfEveryStorageClassRoundTrip(backend: Backend) throws {
        try withDatabase(backend) { database in
            try database.execute("CREATE TABLE sample (a, b, c, d, e)")
            let row: [SQLValue] = [
                .null, .integer(Int64.min), .real(-2.5), .text("卧室 Kid's Night Light 🏠"), .blob([0, 255, 7]),
            ]
            try database.prepare("INSERT INTO sample VALUES (?, ?, ?, ?, ?)").run(row)
            try database.prepare("INSERT INTO sample VALUES (?, ?, ?, ?, ?)").run([
                .blob([]), .integer(Int64.max), .real(0), .text(""), .null,
            ])
            let rows = try database.prepare("SELECT a, b, c, d, e FROM sample ORDER BY rowid").query()
            #expect(rows == [row, [.blob([]), .integer(Int64.max), .real(0), .text(""), .null]])
        }
    }

    /// The typed readers agree with the column's value and refuse every other storage class.
    @Test(arguments: Backend.allCases)
    func aRowReadsTextBlobsAndIdsInPlace(backend: Backend) throws {
        try withDatabase(backend) { database in
            try database.execute("CREATE TABLE sample (a, b, c, d, e, f)")
            let id: [UInt8] = [
                0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10,
            ]
            try database.prepare("INSERT INTO sample VALUES (?, ?, ?, ?, ?, ?)").run([
                .blob(id), .text("卧室 🏠"), .blob(Array(id.prefix(15))), .integer(7), .null, .blob([]),
            ])
            var rows = 0
            try database.prepare("SELECT a, b, c, d, e, f FROM sample").forEachRow { row in
                rows += 1
                #expect(row.words128(0)! == (0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210))
                #expect(row.blob(0) == id)
                #expect(row.text(1) == "卧室 🏠")
                #expect(row.blob(2) == Array(id.prefix(15)))
                #expect(row.blob(5) == [])
                for column in 1...5 { #expect(row.words128(column) == nil, "column \(column)") }
                for column in [0, 2, 3, 4, 5] { #expect(row.text(column) == nil, "column \(column)") }
                for column in [1, 3, 4] { #expect(row.blob(column) == nil, "column \(column)") }
            }
            #expect(rows == 1)
        }
    }

    @Test(arguments: Backend.allCases)
    func preparedStatementIsReusedWithNewParameters(backend: Backend) throws {
        try withDatabase(backend) { database in
            try database.execute("CREATE TABLE room (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            let insert = try database.prepare("INSERT INTO room (name) VALUES (?)")
            for name in ["Kitchen", "厨房", "Garage 1"] { try insert.run([.text(name)]) }
            let count = try database.scalar("SELECT count(*) FROM room")
            #expect(count == .integer(3))
            let find = try database.prepare("SELECT id FROM room WHERE name = ?")
            #expect(try find.query([.text("厨房")]) == [[.integer(2)]])
            #expect(try find.query([.text("Attic")]) == [])
        }
    }

    @Test(arguments: Backend.allCases)
    func uniqueViolationCarriesItsExtendedCode(backend: Backend) throws {
        try withDatabase(backend) { database in
            try database.execute("CREATE TABLE home (name TEXT UNIQUE)")
            let insert = try database.prepare("INSERT INTO home VALUES (?)")
            try insert.run([.text("Home")])
            do throws(SQLiteError) {
                try insert.run([.text("Home")])
                Issue.record("expected a constraint violation")
            } catch {
                #expect(error.extendedCode == 2067)  // SQLITE_CONSTRAINT_UNIQUE
                #expect(error.code == 19)
                #expect(error.isConstraintViolation)
                #expect(error.message.contains("home.name"))
                #expect(error.sql == "INSERT INTO home VALUES (?)")
            }
            // The statement is usable again after the failure.
            try insert.run([.text("Cabin")])
            #expect(try database.scalar("SELECT count(*) FROM home") == .integer(2))
        }
    }

    @Test(arguments: Backend.allCases)
    func transactionRollsBackWhenTheBodyThrows(backend: Backend) throws {
        try withDatabase(backend) { database in
            try database.execute("CREATE TABLE zone (name TEXT)")
            var abandoned = false
            do {
                try database.transaction {
                    try database.prepare("INSERT INTO zone VALUES ('Upstairs')").run()
                    throw Abort()
                }
            } catch is Abort {
                abandoned = true
            }
            #expect(abandoned)
            #expect(try database.scalar("SELECT count(*) FROM zone") == .integer(0))
            let insert = try database.prepare("INSERT INTO zone VALUES ('Downstairs')")
            try database.transaction { try insert.run() }
            #expect(try database.scalar("SELECT count(*) FROM zone") == .integer(1))
        }
    }

    /// BEGIN and COMMIT are compiled once and reused: a COMMIT that fails (a deferred constraint)
    /// rolls the transaction back and reports why, and the next transactions begin and commit again.
    @Test(arguments: Backend.allCases)
    func aFailedCommitRollsBackAndLaterTransactionsCommit(backend: Backend) throws {
        try withDatabase(backend) { database in
            try database.execute("PRAGMA foreign_keys = ON")
            try database.execute("CREATE TABLE home (id INTEGER PRIMARY KEY)")
            try database.execute(
                "CREATE TABLE room (home INTEGER REFERENCES home (id) DEFERRABLE INITIALLY DEFERRED)"
            )
            let room = try database.prepare("INSERT INTO room VALUES (?)")
            for round in 0..<3 {
                do {
                    try database.transaction { try room.run([.integer(99)]) }
                    Issue.record("expected the commit to fail")
                } catch let error as SQLiteError {
                    #expect(error.code == 19)  // SQLITE_CONSTRAINT
                    #expect(error.description.contains("COMMIT"))
                }
                try database.transaction {
                    try database.prepare("INSERT INTO home VALUES (?)").run([.integer(Int64(round))])
                    try room.run([.integer(Int64(round))])
                }
            }
            #expect(try database.scalar("SELECT count(*) FROM room") == .integer(3))
            #expect(try database.scalar("SELECT count(*) FROM room WHERE home = 99") == .integer(0))
        }
    }

    @Test(arguments: Backend.allCases)
    func wrongParameterCountAndBadSQLAreClearErrors(backend: Backend) throws {
        try withDatabase(backend) { database in
            try database.execute("CREATE TABLE t (a, b)")
            do throws(SQLiteError) {
                try database.prepare("INSERT INTO t VALUES (?, ?)").run([.integer(1)])
                Issue.record("expected a parameter count error")
            } catch {
                #expect(error.code == 25)  // SQLITE_RANGE
                #expect(error.message == "expected 2 parameters, got 1")
            }
            do throws(SQLiteError) {
                _ = try database.prepare("SELEKT 1")
                Issue.record("expected a syntax error")
            } catch {
                #expect(error.code == 1)  // SQLITE_ERROR
                #expect(error.description.contains("SELEKT 1"))
            }
        }
    }

    /// `run` binds texts and blobs where they lie instead of copying them: one statement run many
    /// times with texts and blobs of every size, between and around other values, stores each exactly.
    @Test(arguments: Backend.allCases)
    func aReusedStatementStoresEveryBoundTextAndBlobExactly(backend: Backend) throws {
        try withDatabase(backend) { database in
            try database.execute("CREATE TABLE sample (n INTEGER PRIMARY KEY, t, b, x, y)")
            let insert = try database.prepare("INSERT INTO sample VALUES (?, ?, ?, ?, ?)")
            var expected: [[SQLValue]] = []
            for n in 0..<200 {
                let text = String(repeating: "ab\u{0}é", count: n % 17)
                let blob = (0..<(n * 13 % 300)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }
                let row: [SQLValue] = [
                    .integer(Int64(n)), .text(text), .blob(blob), n.isMultiple(of: 3) ? .null : .real(Double(n)),
                    .blob(Array(blob.reversed())),
                ]
                try insert.run(row)
                expected.append(row)
            }
            #expect(try database.prepare("SELECT n, t, b, x, y FROM sample ORDER BY n").query() == expected)
            // The last run's bytes are no longer bound: the statement runs again with new ones.
            try insert.run([.integer(1000), .text("last"), .blob([1]), .null, .blob([])])
            #expect(
                try database.prepare("SELECT t, b, y FROM sample WHERE n = 1000").query() == [
                    [.text("last"), .blob([1]), .blob([])]
                ]
            )
        }
    }

    @Test func fileDatabaseSwitchesToWriteAheadLogging() throws {
        try withDatabase(.file) { database throws in
            #expect(try database.scalar("PRAGMA journal_mode=WAL") == .text("wal"))
        }
    }

    @Test func openingInAMissingDirectoryFails() {
        do {
            _ = try Database(path: "/nonexistent-homerpc-dir/x.sqlite")
            Issue.record("expected the open to fail")
        } catch {
            #expect(error.code == 14)  // SQLITE_CANTOPEN
        }
    }

    /// A new WAL database at `path` with one accessory row, on a connection that holds the file: in
    /// exclusive locking mode it keeps the file locked after its next access, taken here.
    static func holdingTheFile(at path: String) throws -> Database {
        let holder = try Database(path: path)
        _ = try holder.scalar("PRAGMA journal_mode=WAL")
        try holder.execute("CREATE TABLE accessory (name TEXT)")
        try holder.prepare("INSERT INTO accessory VALUES (?)").run([.text("Porch Light")])
        _ = try holder.scalar("PRAGMA locking_mode=EXCLUSIVE")
        try holder.execute("BEGIN IMMEDIATE; COMMIT")
        return holder
    }

    /// Start-up reads on connections of their own while the store's connection may hold a lock;
    /// they must wait for it, not fail with SQLITE_BUSY ("database is locked").
    @Test func aSecondConnectionWaitsForALockInsteadOfFailing() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("homerpc-\(UUID().uuidString).sqlite")
            .path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let holder = try Self.holdingTheFile(at: path)
        let handedOver = UncheckedSendable(holder)
        let released = DispatchGroup()
        released.enter()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(200)) {
            _ = try? handedOver.value.scalar("PRAGMA locking_mode=NORMAL")
            _ = try? handedOver.value.scalar("SELECT count(*) FROM accessory")  // releases the lock
            released.leave()
        }
        defer { released.wait() }
        let reader = try Database(path: path)
        #expect(try reader.scalar("SELECT count(*) FROM accessory") == .integer(1))
    }

    /// The server's store holds its file in exclusive locking mode, where no other connection can
    /// read it: a backup is a copy the holding connection writes. It has what was committed, only
    /// its owner may read it, and it never replaces an existing file.
    @Test func theConnectionThatHoldsTheFileWritesACopyOfIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("homerpc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let holder = try Self.holdingTheFile(at: path)
        let other = try Database(path: path)
        try other.execute("PRAGMA busy_timeout=0")
        let locked = #expect(throws: SQLiteError.self) { try other.scalar("SELECT count(*) FROM accessory") }
        #expect(locked?.isBusy == true)

        let copyPath = directory.appendingPathComponent("copy.sqlite").path
        let size = try holder.writeCopy(to: copyPath)
        let attributes = try FileManager.default.attributesOfItem(atPath: copyPath)
        #expect((attributes[.size] as? NSNumber)?.int64Value == size)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let copy = try Database(path: copyPath)
        #expect(try copy.scalar("SELECT name FROM accessory") == .text("Porch Light"))
        #expect(try copy.scalar("PRAGMA integrity_check") == .text("ok"))

        // An existing file stays as it was; a directory that does not exist is named as the cause.
        try holder.prepare("INSERT INTO accessory VALUES (?)").run([.text("Garage Light")])
        let exists = #expect(throws: CopyError.self) { try holder.writeCopy(to: copyPath) }
        #expect(exists.map { if case .exists = $0 { true } else { false } } == true)
        #expect(try copy.scalar("SELECT count(*) FROM accessory") == .integer(1))
        let missing = directory.appendingPathComponent("no-such-directory/copy.sqlite").path
        let cannotCreate = #expect(throws: CopyError.self) { try holder.writeCopy(to: missing) }
        #expect(cannotCreate?.description == "cannot create \(missing): No such file or directory")
    }

    @Test func dataSurvivesReopeningTheFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("homerpc-\(UUID().uuidString).sqlite")
            .path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        do {
            let database = try Database(path: path)
            _ = try database.scalar("PRAGMA journal_mode=WAL")
            try database.execute("CREATE TABLE accessory (name TEXT)")
            try database.prepare("INSERT INTO accessory VALUES (?)").run([.text("Garage 1 Opener")])
        }
        let reopened = try Database(path: path)
        #expect(try reopened.scalar("SELECT name FROM accessory") == .text("Garage 1 Opener"))
        #expect(try reopened.scalar("PRAGMA integrity_check") == .text("ok"))
    }
}

/// Hands a connection to the one other thread that uses it next (the test orders the two uses).
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
