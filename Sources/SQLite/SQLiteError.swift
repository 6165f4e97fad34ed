import CSQLite

/// A failure reported by SQLite, with its result code (https://sqlite.org/rescode.html).
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The extended result code, e.g. 2067 (`SQLITE_CONSTRAINT_UNIQUE`).
    public let extendedCode: Int32
    /// SQLite's message for this failure, naming the table or column where it can.
    public let message: String
    /// The statement that failed, if any.
    public let sql: String?

    init(extendedCode: Int32, message: String, sql: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    /// The primary result code (the low byte), e.g. 19 (`SQLITE_CONSTRAINT`).
    public var code: Int32 { extendedCode & 0xFF }

    /// SQLite's name for the code, e.g. "constraint failed".
    public var codeDescription: String { String(cString: sqlite3_errstr(extendedCode)) }

    public var isConstraintViolation: Bool { code == SQLITE_CONSTRAINT }
    public var isBusy: Bool { code == SQLITE_BUSY }

    public var description: String {
        let statement = sql.map { " in \"\($0)\"" } ?? ""
        return "SQLite error \(extendedCode) (\(codeDescription)): \(message)\(statement)"
    }
}
