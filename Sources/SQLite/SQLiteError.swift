import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure reported by SQLite, with its result code (https://sqlite.org/rescode.html).
public struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The extended result code, e.g. 2067 (`SQLITE_CONSTRAINT_UNIQUE`).
    public let extendedCode: Int32
    /// SQLite's message for this failure, naming the table or column where it can.
    public let message: String
    /// The statement that failed, if any.
    public let sql: String?
    /// The `errno` of the system call under an I/O failure (`sqlite3_system_errno`), e.g. 28
    /// (ENOSPC) for a full disk; 0 when the failure was not a system call's.
    public let systemErrno: Int32

    init(extendedCode: Int32, message: String, sql: String? = nil, systemErrno: Int32 = 0) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
        self.systemErrno = systemErrno
    }

    /// The primary result code (the low byte), e.g. 19 (`SQLITE_CONSTRAINT`).
    public var code: Int32 { extendedCode & 0xFF }

    /// SQLite's name for the code, e.g. "constraint failed".
    public var codeDescription: String { String(cString: sqlite3_errstr(extendedCode)) }

    public var isConstraintViolation: Bool { code == SQLITE_CONSTRAINT }
    public var isBusy: Bool { code == SQLITE_BUSY }

    /// The system's name for ``systemErrno``, e.g. "No space left on device"; `nil` for none.
    public var systemErrorDescription: String? {
        systemErrno == 0 ? nil : String(cString: strerror(systemErrno))
    }

    public var description: String {
        let statement = sql.map { " in \"\($0)\"" } ?? ""
        let system = systemErrorDescription.map { ", errno \(systemErrno) (\($0))" } ?? ""
        return "SQLite error \(extendedCode) (\(codeDescription)\(system)): \(message)\(statement)"
    }
}
