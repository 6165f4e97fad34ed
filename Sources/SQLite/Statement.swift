import CSQLite

/// A compiled statement, reusable with new parameters. Owned by the thread that owns its ``Database``.
public final class Statement {
    let database: Database
    let handle: OpaquePointer
    public let sql: String

    init(database: Database, handle: OpaquePointer, sql: String) {
        self.database = database
        self.handle = handle
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Runs the statement with `parameters` bound to its `?` placeholders, ignoring any rows.
    public func run(_ parameters: [SQLValue] = []) throws(SQLiteError) {
        try Self.typed {
            try withBindings(parameters) { while try step() {} }
        }
    }

    /// Runs the statement and returns every row as its column values.
    public func query(_ parameters: [SQLValue] = []) throws(SQLiteError) -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        try Self.typed {
            try withBindings(parameters) {
                let columns = sqlite3_column_count(handle)
                while try step() {
                    rows.append((0..<columns).map(column))
                }
            }
        }
        return rows
    }

    /// Runs the statement and hands each row to `body` as it is read, without collecting them: for
    /// loading tables larger than one wants in memory twice. The row reads its columns in place
    /// (``Row``), so a column that is not asked for, or only looked at, is never copied.
    public func forEachRow(
        _ parameters: [SQLValue] = [],
        _ body: (Row) throws -> Void
    ) throws {
        try withBindings(parameters) {
            let row = Row(statement: self, count: Int(sqlite3_column_count(handle)))
            while try step() {
                try body(row)
            }
        }
    }

    /// The row a statement stands on inside ``forEachRow(_:_:)``; valid only during that call.
    public struct Row {
        let statement: Statement
        /// Columns in the row.
        public let count: Int

        /// The column's value, copied out.
        public subscript(column: Int) -> SQLValue {
            statement.column(Int32(column))
        }

        public func isNull(_ column: Int) -> Bool {
            sqlite3_column_type(statement.handle, Int32(column)) == SQLITE_NULL
        }

        /// The column's integer, if it holds one.
        public func integer(_ column: Int) -> Int64? {
            guard sqlite3_column_type(statement.handle, Int32(column)) == SQLITE_INTEGER else { return nil }
            return sqlite3_column_int64(statement.handle, Int32(column))
        }

        /// The column's text; `nil` if it holds none. Read straight from SQLite's buffer: going
        /// through ``subscript(column:)`` built an `SQLValue` first (start-up reads 1.6 million texts).
        public func text(_ column: Int) -> String? {
            guard sqlite3_column_type(statement.handle, Int32(column)) == SQLITE_TEXT else { return nil }
            return statement.text(Int32(column))
        }

        /// The bytes of a blob column, copied; `nil` if it holds no blob.
        public func blob(_ column: Int) -> [UInt8]? {
            guard sqlite3_column_type(statement.handle, Int32(column)) == SQLITE_BLOB else { return nil }
            return statement.blob(Int32(column))
        }

        /// A 16-byte blob column (how ids and UUIDs are stored) as two big-endian words; `nil` if it
        /// holds anything else. Not generic on purpose: a generic reader is not specialised across
        /// the module boundary, and start-up reads 2.8 million ids (about 500 instructions each
        /// through a generic `withBlob`, under 100 this way).
        public func words128(_ column: Int) -> (high: UInt64, low: UInt64)? {
            let handle = statement.handle
            guard sqlite3_column_type(handle, Int32(column)) == SQLITE_BLOB,
                sqlite3_column_bytes(handle, Int32(column)) == 16,
                let bytes = sqlite3_column_blob(handle, Int32(column))
            else { return nil }
            return (
                UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }

    /// Binds `parameters` to the statement's placeholders, runs `body`, and resets the statement.
    ///
    /// Texts and blobs are bound where they lie (`SQLITE_STATIC`) rather than copied: the store's
    /// writer binds a few ids and values per row, and SQLite's copy of each (a malloc and a free) was
    /// a tenth of its work. Each is bound inside its own `withUnsafeBytes` scope and `body` runs
    /// innermost, while every pointer is valid; the bindings are cleared before the scopes end.
    private func withBindings(_ parameters: [SQLValue], _ body: () throws -> Void) throws {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard parameters.count == expected else {
            throw SQLiteError(
                extendedCode: SQLITE_RANGE,
                message: "expected \(expected) parameters, got \(parameters.count)",
                sql: sql
            )
        }
        sqlite3_clear_bindings(handle)
        defer {
            reset()
            sqlite3_clear_bindings(handle)
        }
        try withBound(parameters, from: 0, body)
    }

    /// Binds `parameters[start...]`, then runs `body` while they are bound.
    private func withBound(_ parameters: [SQLValue], from start: Int, _ body: () throws -> Void) throws {
        var index = start
        while index < parameters.count {
            let position = Int32(index + 1)
            switch parameters[index] {
            case .null:
                try check(sqlite3_bind_null(handle, position))
            case .integer(let integer):
                try check(sqlite3_bind_int64(handle, position, integer))
            case .real(let real):
                try check(sqlite3_bind_double(handle, position, real))
            case .text(var text):
                return try text.withUTF8 { utf8 in
                    // A nil destructor is SQLITE_STATIC: bound in place, not copied.
                    try check(sqlite3_bind_text(handle, position, utf8.baseAddress, Int32(utf8.count), nil))
                    try withBound(parameters, from: index + 1, body)
                }
            case .blob(let bytes):
                return try bytes.withUnsafeBytes { raw in
                    try check(sqlite3_bind_blob(handle, position, raw.baseAddress, Int32(raw.count), nil))
                    try withBound(parameters, from: index + 1, body)
                }
            }
            index += 1
        }
        try body()
    }

    private func check(_ result: Int32) throws(SQLiteError) {
        guard result == SQLITE_OK else { throw database.error(sql: sql, fallback: result) }
    }

    /// Advances to the next row; `false` when done.
    private func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let result: throw database.error(sql: sql, fallback: result)
        }
    }

    private func reset() {
        sqlite3_reset(handle)
    }

    fileprivate func column(_ index: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT:
            return .text(text(index))
        case SQLITE_BLOB:
            return .blob(blob(index))
        default:
            return .null
        }
    }

    /// A text column's text, copied out of SQLite's buffer (the caller has checked its type).
    fileprivate func text(_ index: Int32) -> String {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard let text = sqlite3_column_text(handle, index) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// A blob column's bytes, copied (the caller has checked its type).
    fileprivate func blob(_ index: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Runs `body`, which throws only ``SQLiteError`` but goes through untyped-throwing scopes
    /// (`withUnsafeBytes`), with its error typed again.
    private static func typed(_ body: () throws -> Void) throws(SQLiteError) {
        do {
            try body()
        } catch let error as SQLiteError {
            throw error
        } catch {
            fatalError("unreachable: only SQLiteError is thrown here (\(error))")
        }
    }
}
