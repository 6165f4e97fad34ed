internal import SQLite

/// Committed rows in an SQLite file: WAL mode, full fsync on commit, schema migrations on open.
///
/// One connection, used by one thread at a time: the opening thread while the store loads, then only
/// the writer thread. Reads at run time come from memory, never from here.
final class SQLiteStorage: StoreBackend, @unchecked Sendable {
    private let database: Database
    private var upserts: [String: Statement] = [:]
    private var deletes: [String: Statement] = [:]
    private let insertEventBatch: Statement
    private let setValue: Statement
    private let setReachable: Statement
    private let deleteEventBatchRange: Statement
    private let deleteEventBatch: Statement
    /// Each home's batches in the table (the writer's alone, like the connection). A failed commit
    /// can leave it naming rows the rollback removed: the writer commits nothing after a failure,
    /// and the next open reads the table afresh.
    private var eventBatches = EventBatchIndex()

    /// How the writer and migration 6 add an event batch.
    private static let insertEventBatchSQL =
        "INSERT INTO event_batch (home, first_revision, last_revision, events) VALUES (?, ?, ?, ?)"

    /// Opens (creating if needed) the store at `path` and migrates it. Check its integrity too
    /// (``checkIntegrity(of:)``).
    init(path: String) throws(StoreError) {
        do {
            database = try Database(path: path)
            // WAL lets start-up reads and the writer overlap; FULL syncs the WAL on every commit, so
            // an acknowledged change survives power loss as well as kill -9.
            _ = try database.scalar("PRAGMA journal_mode=WAL")
            try database.execute("PRAGMA synchronous=FULL")
            // A checkpoint runs inside the commit that crosses the threshold and adds the database
            // file's own fsync to it. At SQLite's default of 1,000 pages that was one commit in 75
            // under a steady write load, the store's slowest percent; the hot pages repeat in the
            // WAL, so a checkpoint ten times rarer copies about as many distinct pages. The WAL
            // file grows to about 40 MB before it is reused.
            try database.execute("PRAGMA wal_autocheckpoint=10000")
            try Self.migrate(database)
            // A plain INSERT, numbered by SQLite: an event is never replaced (a revision once used
            // means one change; ``EventBatchIndex`` fails a commit whose batch would reuse one).
            insertEventBatch = try database.prepare(Self.insertEventBatchSQL)
            eventBatches = try Self.indexEventBatches(in: database)
            setValue = try database.prepare(
                "UPDATE characteristic SET value = ?, value_time = ? WHERE id = ?"
            )
            setReachable = try database.prepare("UPDATE accessory SET is_reachable = ? WHERE id = ?")
            // A trim's batches, by number: a run of the table when no other home wrote in between
            // (nearly always), one row at a time otherwise.
            deleteEventBatchRange = try database.prepare("DELETE FROM event_batch WHERE number BETWEEN ?1 AND ?2")
            deleteEventBatch = try database.prepare("DELETE FROM event_batch WHERE number = ?")
        } catch {
            throw .sqlite(path, error)
        }
    }

    /// Keeps the file locked by this connection until it closes (SQLite's exclusive locking mode):
    /// a commit then takes and releases no lock, where it made six `fcntl` calls (the file's and the
    /// WAL index's locks), and no other process can read the file while the server runs (a backup
    /// goes through ``writeCopy(to:)``). Call it once the load's other connections are closed.
    /// - Throws: when another process holds the file (an `sqlite3` shell, a backup) past SQLite's
    ///   busy timeout; the connection is then back in normal locking mode.
    func holdExclusively() throws(StoreError) {
        do {
            _ = try database.scalar("PRAGMA locking_mode=EXCLUSIVE")
            // The next write transaction takes the lock: take it now, so that a process that
            // holds the file stops the start-up instead of failing the first commit.
            try database.execute("BEGIN IMMEDIATE; COMMIT")
        } catch {
            _ = try? database.scalar("PRAGMA locking_mode=NORMAL")
            throw .sqlite("\(database.path) is open in another process; the server needs it alone", error)
        }
    }

    func writeCopy(to path: String) throws(HomeServiceError) -> Int64 {
        do {
            return try database.writeCopy(to: path)
        } catch {
            switch error {
            case .exists: throw HomeServiceError(.alreadyExists, error.description)
            case .cannotCreate: throw HomeServiceError(.invalidParameter, error.description)
            case .failed, .notSynced: throw HomeServiceError(.genericError, error.description)
            }
        }
    }

    /// Runs SQLite's quick check over the whole file on a connection of its own, so that it can run
    /// beside the load (WAL lets readers overlap): it reads every page, a quarter of a second at
    /// 100,000 accessories.
    static func checkIntegrity(of path: String) throws(StoreError) {
        do {
            let check = try Database(path: path).scalar("PRAGMA quick_check")?.text ?? "no answer"
            guard check == "ok" else { throw StoreError.corrupt("\(path): integrity check says \(check)") }
        } catch {
            throw .sqlite(path, error)
        }
    }

    /// The schema version a database is at.
    static func schemaVersion(of database: Database) throws(SQLiteError) -> Int {
        Int(try database.scalar("PRAGMA user_version")?.integer ?? 0)
    }

    private static func migrate(_ database: Database) throws {
        let version = try schemaVersion(of: database)
        guard version <= StoreSchema.currentVersion else {
            throw StoreError.corrupt(
                "schema version \(version) is newer than this server's \(StoreSchema.currentVersion)"
            )
        }
        for (index, migration) in StoreSchema.migrations.enumerated().dropFirst(version) {
            try database.transaction {
                try database.execute(migration)
                if index + 1 == StoreSchema.eventBatchVersion { try batchLegacyEvents(in: database) }
                if index + 1 == StoreSchema.idempotencyBatchVersion { try batchLegacyIdempotencyKeys(in: database) }
                try database.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }

    /// Migration 6's second half: moves the rows of the `event` table (one per event) into
    /// `event_batch` rows of consecutive revisions, and drops the old table.
    private static func batchLegacyEvents(in database: Database) throws {
        let columns = StoreSchema.legacyEvent.columns.joined(separator: ", ")
        let insert = try database.prepare(insertEventBatchSQL)
        // Streamed: a store of many homes holds millions of events, a batch at a time in memory.
        var run: [HomeChange] = []
        func writeRun() throws {
            guard !run.isEmpty else { return }
            try insert.run(RowCoding.eventBatch(run[...]))
            run.removeAll(keepingCapacity: true)
        }
        try database.prepare("SELECT \(columns) FROM event ORDER BY home, revision").forEachRow { row in
            let change = try RowCoding.legacyChange(row)
            // A batch is a run of one home's consecutive revisions (an older file may have gaps,
            // which the loader then refuses as before).
            if let last = run.last,
                last.home != change.home || last.revision + 1 != change.revision
                    || run.count == EventBatches.maxEventsPerBatch
            {
                try writeRun()
            }
            run.append(change)
        }
        try writeRun()
        try database.execute("DROP TABLE event")
    }

    /// Migration 8's second half: moves the rows of the `idempotency_key` table (one per key) into
    /// one `idempotency_batch` row per account, oldest first, and drops the old table.
    private static func batchLegacyIdempotencyKeys(in database: Database) throws {
        let columns = StoreSchema.legacyIdempotencyKey.columns.joined(separator: ", ")
        var recordsByAccount: [AccountID: [HomeStore.IdempotencyRecord]] = [:]
        // At most 10,000 keys an account, 16 MiB of them: read whole.
        try database.prepare("SELECT \(columns) FROM idempotency_key ORDER BY created_at").forEachRow { row in
            let record = try RowCoding.legacyIdempotencyRecord(row)
            recordsByAccount[record.account, default: []].append(record)
        }
        let insert = try database.prepare("INSERT INTO idempotency_batch (number, account, records) VALUES (?, ?, ?)")
        for (number, account) in recordsByAccount.keys.sorted(by: {
            $0.raw.bytes.lexicographicallyPrecedes($1.raw.bytes)
        })
        .enumerated() {
            let records = recordsByAccount[account]!
            let byteCount = records.reduce(0) { $0 + 32 + $1.byteCount }
            try insert.run(RowCoding.idempotencyRow(Int64(number + 1), account, records, byteCount: byteCount))
        }
        try database.execute("DROP TABLE idempotency_key")
    }

    /// Where each home's event batches are, read once at open.
    private static func indexEventBatches(in database: Database) throws -> EventBatchIndex {
        var index = EventBatchIndex()
        let batches = try database.prepare(
            "SELECT number, home, first_revision, last_revision FROM event_batch ORDER BY number"
        )
        try batches.forEachRow { row in
            guard let number = row.integer(0), let home = row.blob(1), let first = row.integer(2),
                let last = row.integer(3)
            else { throw StoreError.corrupt("an event batch row has a missing column") }
            try index.check(home: home, firstRevision: first)
            index.add(number: number, home: home, lastRevision: last)
        }
        return index
    }

    func apply(_ changes: [StoreChange]) throws(StoreError) -> CommitTiming {
        let start = ContinuousClock.now
        var statementsDone = start
        do {
            let overwritten = changes.overwrittenValueWrites()
            var events = EventBatches(capacity: changes.count)
            try database.transaction {
                for (index, change) in changes.enumerated() {
                    if let overwritten, overwritten[index] { continue }
                    switch change {
                    case .upsert(let table, let row):
                        try upsertStatement(table).run(row)
                    case .event(let change):
                        events.add(change)
                    case .delete(let table, let key):
                        try deleteStatement(table).run(key)
                    case .setValue(let characteristic, let value, let time):
                        try setValue.run([RowCoding.value(value), .integer(time), .blob(characteristic.bytes)])
                    case .setReachable(let accessory, let reachable):
                        try setReachable.run([.bool(reachable), .blob(accessory)])
                    case .trimEvents(let home, let revision):
                        try insertBatches(events.take())
                        try deleteEventBatches(of: home, through: revision)
                    }
                }
                try insertBatches(events.take())
                statementsDone = .now
            }
        } catch {
            throw .sqlite("commit failed", error)
        }
        return CommitTiming(
            statements: start.duration(to: statementsDone),
            commit: statementsDone.duration(to: .now),
            changes: changes.count
        )
    }

    private func insertBatches(_ batches: [ArraySlice<HomeChange>]) throws {
        for batch in batches {
            let home = batch.first!.home.raw.bytes
            try eventBatches.check(home: home, firstRevision: Int64(batch.first!.revision))
            try insertEventBatch.run(RowCoding.eventBatch(batch))
            eventBatches.add(number: database.lastInsertedRowID, home: home, lastRevision: Int64(batch.last!.revision))
        }
    }

    /// Deletes the home's batches that end at or before `revision`. Whole batches only: one that
    /// reaches past the revision stays until a later trim.
    private func deleteEventBatches(of home: [UInt8], through revision: Int64) throws(SQLiteError) {
        let numbers = eventBatches.removeBatches(of: home, through: revision)
        guard let first = numbers.first, let last = numbers.last else { return }
        if last - first + 1 == Int64(numbers.count) {
            try deleteEventBatchRange.run([.integer(first), .integer(last)])
        } else {
            for number in numbers { try deleteEventBatch.run([.integer(number)]) }
        }
    }

    func forEachRow(of table: StoreTable, _ body: (any StoredRow) throws(StoreError) -> Void) throws(StoreError) {
        try database.forEachRow(of: table, body)
    }

    func rowCount(of table: StoreTable) throws(StoreError) -> Int {
        try database.rowCount(of: table)
    }

    func makeReader() throws(StoreError) -> any TableReader {
        do {
            return SQLiteTableReader(database: try Database(path: database.path))
        } catch {
            throw .sqlite(database.path, error)
        }
    }

    private func upsertStatement(_ table: StoreTable) throws(SQLiteError) -> Statement {
        if let statement = upserts[table.name] { return statement }
        let placeholders = Array(repeating: "?", count: table.columns.count).joined(separator: ", ")
        let updates = table.columns.dropFirst(table.keyColumnCount).map { "\($0) = excluded.\($0)" }
        let conflict =
            updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET \(updates.joined(separator: ", "))"
        let statement = try database.prepare(
            """
            INSERT INTO \(table.name) (\(table.columns.joined(separator: ", "))) VALUES (\(placeholders))
            ON CONFLICT (\(table.keyColumns.joined(separator: ", "))) \(conflict)
            """
        )
        upserts[table.name] = statement
        return statement
    }

    private func deleteStatement(_ table: StoreTable) throws(SQLiteError) -> Statement {
        if let statement = deletes[table.name] { return statement }
        let condition = table.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        let statement = try database.prepare("DELETE FROM \(table.name) WHERE \(condition)")
        deletes[table.name] = statement
        return statement
    }
}

/// A connection of its own that only reads, at start-up (WAL lets it read beside the store's
/// connection).
private final class SQLiteTableReader: TableReader, @unchecked Sendable {
    private let database: Database

    init(database: Database) {
        self.database = database
    }

    func forEachRow(of table: StoreTable, _ body: (any StoredRow) throws(StoreError) -> Void) throws(StoreError) {
        try database.forEachRow(of: table, body)
    }

    func rowCount(of table: StoreTable) throws(StoreError) -> Int {
        try database.rowCount(of: table)
    }
}

extension Database {
    fileprivate func rowCount(of table: StoreTable) throws(StoreError) -> Int {
        do {
            return Int(try scalar("SELECT count(*) FROM \(table.name)")?.integer ?? 0)
        } catch {
            throw .sqlite("counting \(table.name)", error)
        }
    }

    fileprivate func forEachRow(
        of table: StoreTable,
        _ body: (any StoredRow) throws(StoreError) -> Void
    ) throws(StoreError) {
        do {
            let columns = table.columns.joined(separator: ", ")
            let statement = try prepare("SELECT \(columns) FROM \(table.name) ORDER BY \(table.orderBy)")
            try statement.forEachRow { row in try body(row) }
        } catch {
            throw .sqlite("reading \(table.name)", error)
        }
    }
}

extension StoreError {
    /// `error`, thrown while the store was doing `context`: SQLite's keeps its result code and errno
    /// as the cause; the store's own errors pass through unchanged.
    static func sqlite(_ context: String, _ error: any Error) -> StoreError {
        switch error {
        case let error as StoreError: error
        case let error as SQLiteError: .database(context, cause: StorageFailure(error))
        default: .database("\(context): \(error)")
        }
    }
}

extension StorageFailure {
    init(_ error: SQLiteError) {
        self.init(
            resultCode: error.extendedCode,
            resultName: error.codeDescription,
            systemErrno: error.systemErrno,
            systemErrorName: error.systemErrorDescription ?? "",
            message: error.sql.map { "\(error.message) in \"\($0)\"" } ?? error.message
        )
    }
}
