import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Keeps a second `homed` off a store this one serves. Each server holds the whole store in memory
/// and writes only its own changes, so two on one file would each acknowledge changes the other
/// never sees, and a restart would bring back a mix of both.
///
/// The lock is `flock` on `<store>.lock` beside the store (not on the database file itself: closing
/// any other descriptor of that file would drop SQLite's own locks). The kernel releases it when the
/// process ends, also on `kill -9`, so a stale file never blocks a start; the file stays, naming the
/// last holder's pid.
final class StoreLock {
    private let handle: FileHandle

    /// Takes the lock of the store at `storePath`, or explains who holds it.
    init(storePath: String) throws {
        let path = storePath + ".lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StoreLockError("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            throw StoreLockError(
                "the store \(storePath) is in use by another homed"
                    + (holder.map { $0.isEmpty ? "" : " (pid \($0))" } ?? "") + "; stop it first"
            )
        }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("\(getpid())\n".utf8))
    }
}

/// Why the store's lock could not be taken (homed prints it and exits with status 1).
struct StoreLockError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
