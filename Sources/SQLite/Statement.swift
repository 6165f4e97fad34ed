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
    ///
    /// Texts and blobs are bound where they lie (`SQLITE_STATIC`) rather than copied: the store's
    /// writer binds a few ids and values per row, and SQLite's copy of each (a malloc and a free) was
    /// a tenth of its work. Each is bound inside its own `withUnsafeBytes` scope and the statement
    /// runs innermost, while every pointer is valid; the bindings are cleared before the scopes end.
    public func run(_ parameters: [SQLValue] = []) throws(SQLiteError) {
        try checkCount(parameters)
        sqlite3_clear_bindings(handle)
        defer {
            reset()
            sqlite3_clear_bindings(handle)
        }
        try withBound(parameters, from: 0) { () throws(SQLiteError) in
            while try step() {}
        }
    }

    /// Binds `parameters[index...]` without copying their bytes, then runs `body` while they are bound.
    private func withBound(
        _ parameters: [SQLValue],
        from start: Int,
        _ body: () throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
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
                return try Self.unwrap {
                    try text.withUTF8 { utf8 throws in
                        // A nil destructor is SQLITE_STATIC: bound in place, not copied.
                        try check(sqlite3_bind_text(handle, position, utf8.baseAddress, Int32(utf8.count), nil))
                        try withBound(parameters, from: index + 1, body)
                    }
                }
            case .blob(let bytes):
                return try Self.unwrap {
                    try bytes.withUnsafeBytes { raw throws in
                        try check(sqlite3_bind_blob(handle, position, raw.baseAddress, Int32(raw.count), nil))
                        try withBound(parameters, from: index + 1, body)
                    }
                }
            }
            index += 1
        }
        try body()
    }

    private func check(_ result: Int32) throws(SQLiteError) {
        guard result == SQLITE_OK else { throw database.error(sql: sql, fallback: result) }
    }

    /// Runs the statement and returns every row as its column values.
    public func query(_ parameters: [SQLValue] = []) throws(SQLiteError) -> [[SQLValue]] {
        try bind(parameters)
        defer { reset() }
        var rows: [[SQLValue]] = []
        let columns = sqlite3_column_count(handle)
        while try step() {
            rows.append((0..<columns).map(column))
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
        try bind(parameters)
        defer { reset() }
        let row = Row(statement: self, count: Int(sqlite3_column_count(handle)))
        while try step() {
            try body(row)
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
            let handle = statement.handle
            guard sqlite3_column_type(handle, Int32(column)) == SQLITE_TEXT else { return nil }
            let count = Int(sqlite3_column_bytes(handle, Int32(column)))
            guard let text = sqlite3_column_text(handle, Int32(column)) else { return "" }
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        }

        /// The bytes of a blob column, copied; `nil` if it holds no blob.
        public func blob(_ column: Int) -> [UInt8]? {
            let handle = statement.handle
            guard sqlite3_column_type(handle, Int32(column)) == SQLITE_BLOB else { return nil }
            let count = Int(sqlite3_column_bytes(handle, Int32(column)))
            guard count > 0, let bytes = sqlite3_column_blob(handle, Int32(column)) else { return [] }
            return Array(UnsafeRawBufferPointer(start: bytes, count: count))
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

    private func checkCount(_ parameters: [SQLValue]) throws(SQLiteError) {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard parameters.count == expected else {
            throw SQLiteError(
                extendedCode: SQLITE_RANGE,
                message: "expected \(expected) parameters, got \(parameters.count)",
                sql: sql
            )
        }
    }

    private func bind(_ parameters: [SQLValue]) throws(SQLiteError) {
        try checkCount(parameters)
        sqlite3_clear_bindings(handle)
        for (offset, value) in parameters.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null:
                result = sqlite3_bind_null(handle, index)
            case .integer(let integer):
                result = sqlite3_bind_int64(handle, index, integer)
            case .real(let real):
                result = sqlite3_bind_double(handle, index, real)
            case .text(let text):
                result = sqlite3_bind_text(handle, index, text, -1, Self.transient)
            case .blob(let bytes):
                result = bytes.withUnsafeBytes { raw in
                    sqlite3_bind_blob(handle, index, raw.baseAddress, Int32(raw.count), Self.transient)
                }
            }
            guard result == SQLITE_OK else { throw database.error(sql: sql, fallback: result) }
        }
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
            let count = Int(sqlite3_column_bytes(handle, index))
            guard let text = sqlite3_column_text(handle, index) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }

    /// SQLite's SQLITE_TRANSIENT (copy the bound bytes now); the macro does not import into Swift.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Runs a closure given to an untyped-throwing API with a body that throws only `SQLiteError`.
    private static func unwrap(_ body: () throws -> Void) throws(SQLiteError) {
        do {
            try body()
        } catch let error as SQLiteError {
            throw error
        } catch {
            fatalError("unreachable: the body throws only SQLiteError (\(error))")
        }
    }
}
