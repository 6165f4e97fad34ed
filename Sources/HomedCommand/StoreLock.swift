import Foundation
import UV

/// Keeps a second `homed` off a store this one serves. Each server holds the whole store in memory
/// and writes only its own changes, so two on one file would each acknowledge changes the other
/// never sees, and a restart would bring back a mix of both.
///
/// The lock is on `<store>.lock` beside the store, not on the database file itself: closing any
/// other descriptor of that file would drop SQLite's own locks. The file stays after the server
/// ends, naming the last holder's pid.
enum StoreLock {
    /// Takes the lock of the store at `storePath` for as long as the result is kept, or explains
    /// who holds it.
    static func acquire(storePath: String) throws -> ExclusiveFileLock {
        let path = storePath + ".lock"
        let lock: ExclusiveFileLock?
        do {
            lock = try ExclusiveFileLock.acquire(path)
            try lock?.record("\(getpid())\n")
        } catch {
            throw StartError("cannot lock \(path): \(error.message)")
        }
        guard let lock else {
            let holder =
                (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                ?? ""
            throw StartError(
                "the store \(storePath) is in use by another homed\(holder.isEmpty ? "" : " (pid \(holder))"); stop it first"
            )
        }
        return lock
    }
}

/// Why homed could not start: the store's lock, a listener (homed prints it and exits with status 1).
struct StartError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
