#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why ``Database/writeCopy(to:)`` wrote no copy.
public enum CopyError: Error, Sendable, CustomStringConvertible {
    /// Something already exists at the path; it is left as it was.
    case exists(path: String)
    /// The file could not be created (no such directory, no permission): the system's reason.
    case cannotCreate(path: String, reason: String)
    /// SQLite could not write the copy (a full disk, an I/O error); the partial file is removed.
    case failed(SQLiteError)
    /// The copy was written but could not be synced to disk (an I/O error); it is removed.
    case notSynced(path: String, reason: String)

    public var description: String {
        switch self {
        case .exists(let path): "\(path) already exists"
        case .cannotCreate(let path, let reason): "cannot create \(path): \(reason)"
        case .failed(let error): "the copy failed: \(error)"
        case .notSynced(let path, let reason): "syncing \(path) failed: \(reason)"
        }
    }
}

extension Database {
    /// Writes a consistent copy of the database as of its last commit to a new file at `path`, which
    /// only the file's owner may read, and syncs it to disk. It runs on this connection (`VACUUM
    /// INTO`), between its transactions, so it works while the connection holds the file in
    /// exclusive locking mode, where no other connection can read it. The copy is compacted and has
    /// no WAL file of its own: copy it, or open it, as one file.
    /// - Returns: the copy's size in bytes.
    public func writeCopy(to path: String) throws(CopyError) -> Int64 {
        // Created here rather than by SQLite: exclusively (never over an existing file), with
        // the owner-only mode the store's own files have, whatever the process's umask.
        let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard created >= 0 else {
            let code = errno
            if code == EEXIST { throw .exists(path: path) }
            throw .cannotCreate(path: path, reason: String(cString: strerror(code)))
        }
        close(created)
        do {
            try prepare("VACUUM INTO ?").run([.text(path)])
        } catch {
            unlink(path)
            throw .failed(error)
        }
        // VACUUM INTO leaves its pages to the page cache: the copy is a backup once on disk.
        let copy = open(path, O_RDONLY | O_CLOEXEC)
        var status = stat()
        defer { close(copy) }
        guard copy >= 0, fsync(copy) == 0, fstat(copy, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(path)
            throw .notSynced(path: path, reason: reason)
        }
        return Int64(status.st_size)
    }
}
