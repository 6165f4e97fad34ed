/// Why the store could not load or persist.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The database could not be opened, read or written: what the store was doing, and what the
    /// storage engine said (`nil` when the failure was the store's own, not the engine's).
    case database(String, cause: StorageFailure? = nil)
    /// The stored data contradicts itself (a dangling reference, an undecodable field, a failed
    /// integrity check). The store refuses to start rather than serve a damaged home.
    case corrupt(String)
    /// A commit failed with this error; the store accepts no more changes until it is reopened.
    indirect case failed(StoreError)

    /// What the storage engine said, wherever in the error it is: an operator's logs and
    /// `ServerInfo` show its code and errno, so that a full disk is told from a broken one.
    public var cause: StorageFailure? {
        switch self {
        case .database(_, let cause): cause
        case .corrupt: nil
        case .failed(let error): error.cause
        }
    }

    public var description: String {
        switch self {
        case .database(let message, let cause?): "database error: \(message): \(cause)"
        case .database(let message, nil): "database error: \(message)"
        case .corrupt(let message): "store is corrupt: \(message)"
        case .failed(let error): "store stopped accepting changes after a failed commit: \(error)"
        }
    }
}

/// A failure as the storage engine reported it (SQLite's, for the embedded store).
public struct StorageFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The engine's result code: SQLite's extended code (https://sqlite.org/rescode.html), e.g. 13
    /// (SQLITE_FULL) or 778 (SQLITE_IOERR_WRITE).
    public var resultCode: Int32
    /// The engine's name for the code, e.g. "database or disk is full".
    public var resultName: String
    /// The `errno` of the system call under it, e.g. 28 (ENOSPC); 0 when there was none.
    public var systemErrno: Int32
    /// The system's name for `systemErrno`, e.g. "No space left on device"; empty for none.
    public var systemErrorName: String
    /// The engine's message, with the statement that failed when there was one.
    public var message: String

    public init(resultCode: Int32, resultName: String, systemErrno: Int32, systemErrorName: String, message: String) {
        self.resultCode = resultCode
        self.resultName = resultName
        self.systemErrno = systemErrno
        self.systemErrorName = systemErrorName
        self.message = message
    }

    public var description: String {
        let system = systemErrno == 0 ? "" : ", errno \(systemErrno) (\(systemErrorName))"
        return "SQLite error \(resultCode) (\(resultName)\(system)): \(message)"
    }
}
