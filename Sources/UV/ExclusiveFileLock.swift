import Glibc

/// An exclusive `flock` on a file, held until this object is released or the process ends (the
/// kernel drops it then, also on `kill -9`, so a file left behind never blocks the next holder).
public final class ExclusiveFileLock {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Takes the lock on `path`, creating the file (mode 0600) if needed, without waiting.
    /// - Returns: `nil` when another process holds it.
    /// - Throws: ``UVError`` when the file cannot be opened or locked for another reason.
    public static func acquire(_ path: String) throws(UVError) -> ExclusiveFileLock? {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw UVError(code: -errno) }
        let lock = ExclusiveFileLock(descriptor: descriptor)
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            if errno == EWOULDBLOCK { return nil }
            throw UVError(code: -errno)
        }
        return lock
    }

    /// Replaces the file's contents with `text` (for example, who holds the lock).
    public func record(_ text: String) throws(UVError) {
        guard ftruncate(descriptor, 0) == 0 else { throw UVError(code: -errno) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count else { throw UVError(code: written < 0 ? -errno : -EIO) }
    }
}
