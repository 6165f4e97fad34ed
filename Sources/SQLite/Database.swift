import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One SQLite connection. It is not thread-safe: a single thread owns it (the store's writer thread,
/// or the thread that loads the store at start-up).
///
/// Every pointer SQLite hands out stays inside this module: statements are ``Statement`` objects,
/// values are Swift types, and failures are ``SQLiteError``.
///
/// ```swift
/// let database = try Database(path: "homed.sqlite")
/// try database.execute("CREATE TABLE home (id BLOB PRIMARY KEY, name TEXT NOT NULL)")
/// try database.transaction {
///     try database.prepare("INSERT INTO home VALUES (?, ?)").run([.blob(id), .text("Home")])
/// }
/// ```
public final class Database {
    let handle: OpaquePointer
    /// The path it was opened with (":memory:" for an in-memory database).
    public let path: String
    /// How long a statement waits for a lock another connection holds before it fails with
    /// SQLITE_BUSY.
    public static let busyTimeoutMilliseconds: Int32 = 5_000

    /// Opens (creating if needed) the database at `path`; ":memory:" opens a private in-memory one.
    /// - Throws: ``SQLiteError`` if it cannot be opened.
    public init(path: String) throws(SQLiteError) {
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &connection, flags, nil)
        guard result == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(connection)
            throw SQLiteError(extendedCode: result, message: message)
        }
        sqlite3_extended_result_codes(connection, 1)
        // Connections of one process contend briefly (a reader opening while another connection
        // recovers the WAL at start-up gets SQLITE_BUSY at once without this): wait, as a lock
        // would, rather than fail.
        sqlite3_busy_timeout(connection, Self.busyTimeoutMilliseconds)
        self.handle = connection
        self.path = path
    }

    deinit {
        sqlite3_finalize(beginStatement)
        sqlite3_finalize(commitStatement)
        // close_v2 defers the close until every statement is finalized, so order does not matter.
        sqlite3_close_v2(handle)
    }

    /// BEGIN IMMEDIATE and COMMIT, compiled on first use: the store's writer runs both for every
    /// commit, and `sqlite3_exec` compiled them again each time. Raw handles, not ``Statement``s,
    /// which would retain this connection.
    private var beginStatement: OpaquePointer?
    private var commitStatement: OpaquePointer?

    /// Runs a statement without parameters or rows, compiled once into `cached`.
    private func runCompiledOnce(_ sql: String, _ cached: inout OpaquePointer?) throws(SQLiteError) {
        if cached == nil {
            let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &cached, nil)
            guard result == SQLITE_OK, cached != nil else { throw error(sql: sql, fallback: result) }
        }
        let result = sqlite3_step(cached)
        let failure = result == SQLITE_DONE ? nil : error(sql: sql, fallback: result)
        sqlite3_reset(cached)
        if let failure { throw failure }
    }

    /// Runs one or more statements that return no rows (schema changes, pragmas without results).
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard result == SQLITE_OK else {
            let systemErrno = systemErrno(after: sqlite3_extended_errcode(handle))
            let text = message.map { String(cString: $0) } ?? lastErrorMessage
            throw SQLiteError(
                extendedCode: sqlite3_extended_errcode(handle),
                message: text,
                sql: sql,
                systemErrno: systemErrno
            )
        }
    }

    /// Compiles `sql` (one statement) for repeated use.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard result == SQLITE_OK, let statement else {
            throw error(sql: sql, fallback: result)
        }
        return Statement(database: self, handle: statement, sql: sql)
    }

    /// Runs `body` in one transaction: committed if it returns, rolled back if it (or the commit) throws.
    public func transaction(_ body: () throws -> Void) throws {
        try runCompiledOnce("BEGIN IMMEDIATE", &beginStatement)
        do {
            try body()
            try runCompiledOnce("COMMIT", &commitStatement)
        } catch {
            // A failed COMMIT may leave the transaction open; ROLLBACK then closes it. If the
            // transaction is already gone, ROLLBACK fails harmlessly.
            _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid (the INTEGER PRIMARY KEY) of the row the last INSERT added.
    public var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The first value of the first row of `sql`, e.g. for `PRAGMA journal_mode=WAL`.
    public func scalar(_ sql: String) throws(SQLiteError) -> SQLValue? {
        let statement = try prepare(sql)
        return try statement.query([]).first?.first
    }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// The error of the call that just failed with `fallback`. Call it before any other call.
    func error(sql: String?, fallback: Int32) -> SQLiteError {
        let stored = sqlite3_extended_errcode(handle)
        let code = stored == SQLITE_OK ? fallback : stored
        return SQLiteError(
            extendedCode: code,
            message: lastErrorMessage,
            sql: sql,
            systemErrno: systemErrno(after: code)
        )
    }

    /// The errno under a failure with `code`, read before anything else can change it: SQLite's
    /// own record (`sqlite3_system_errno`) when it kept one, else, for an I/O failure (IOERR, FULL,
    /// CANTOPEN), the thread's errno as the failed call left it (SQLite 3.40 records none for a
    /// failed WAL write at COMMIT: a write past the file-size limit left it 0, errno EFBIG).
    func systemErrno(after code: Int32) -> Int32 {
        let left = errno
        let recorded = sqlite3_system_errno(handle)
        if recorded != 0 { return recorded }
        switch code & 0xFF {
        case SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN: return left
        default: return 0
        }
    }
}
