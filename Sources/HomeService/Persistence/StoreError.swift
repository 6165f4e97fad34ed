/// A failure of the storage underneath the store (not a HomeKit rule: those are ``HomeServiceError``).
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The database could not be opened, read or written; the message has SQLite's code and text.
    case database(String)
    /// The stored data contradicts itself (a dangling reference, an undecodable field, a failed
    /// integrity check). The store refuses to start rather than serve a damaged home.
    case corrupt(String)
    /// A commit failed earlier; the store accepts no more changes until it is reopened.
    case failed(String)

    public var description: String {
        switch self {
        case .database(let message): "database error: \(message)"
        case .corrupt(let message): "store is corrupt: \(message)"
        case .failed(let message): "store stopped accepting changes after a failed commit: \(message)"
        }
    }
}
