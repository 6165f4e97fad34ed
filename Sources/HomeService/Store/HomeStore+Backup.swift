extension HomeStore {
    /// Writes a consistent copy of the committed store to a new file at `path`, then calls
    /// `completion` on the store's thread with the copy's size in bytes, or with why there is no copy
    /// (1 when `path` exists, 3 when it cannot be created, 48 for a store without a file, 52 when
    /// writing failed). Every change acknowledged before this call is in the copy; changes made
    /// while it is written wait for it. Restoring it is replacing the store's file with it while the
    /// server is stopped (docs/OPERATIONS.md).
    /// - Throws: 17 unless `caller` is the server's owner; 3 unless `path` is absolute (a relative
    ///   one would name a file in the server's working directory, not the caller's).
    public func writeCopy(
        to path: String,
        by caller: AccountID,
        then completion: @escaping (Result<Int64, HomeServiceError>) -> Void
    ) throws(HomeServiceError) {
        try requireOwner(caller, "back up the store")
        guard path.hasPrefix("/") else {
            throw HomeServiceError(.invalidParameter, "the backup's path must be absolute (on the server's machine)")
        }
        lastCopyNumber += 1
        copyWaiters[lastCopyNumber] = completion
        writer.writeCopy(to: path, number: lastCopyNumber)
    }
}
