/// Where each home's rows of the `event_batch` table lie, by `number` (its rowid), oldest first:
/// kept by the writer, which trims a home's oldest batches by number (the table has no index on
/// the home) and refuses a batch that does not follow its home's last.
///
/// The table is numbered in the order batches are written, so that a commit appends at its end. Keyed
/// by (home, revision), as it was up to schema version 6, SQLite rebalanced its last pages every few
/// commits (an index B-tree has no cheap append): 2.8 pages of the WAL a commit of 16 writes, 1.8
/// numbered (1.5 with trims in 16ths).
struct EventBatchIndex {
    private struct Batch {
        let number: Int64
        let lastRevision: Int64
    }

    private var batches: [[UInt8]: FrontDroppingArray<Batch>] = [:]

    /// Checks that a batch of `home` starts after the last one stored, before it is written: a
    /// revision, once used, means one change (the key on (home, first_revision) that the table had
    /// up to version 6 made such a commit fail the same way).
    func check(home: [UInt8], firstRevision: Int64) throws(StoreError) {
        if let last = batches[home]?.last, firstRevision <= last.lastRevision {
            throw .corrupt("an event batch of revision \(firstRevision) follows one ending at \(last.lastRevision)")
        }
    }

    /// Records a batch as written (checked first with ``check(home:firstRevision:)``).
    mutating func add(number: Int64, home: [UInt8], lastRevision: Int64) {
        batches[home, default: FrontDroppingArray()].append(Batch(number: number, lastRevision: lastRevision))
    }

    /// Forgets the home's batches that end at or before `revision` (whole batches only) and returns
    /// their numbers, oldest first.
    mutating func removeBatches(of home: [UInt8], through revision: Int64) -> [Int64] {
        var numbers: [Int64] = []
        batches[home]?.removeFirst { batch in
            guard batch.lastRevision <= revision else { return false }
            numbers.append(batch.number)
            return true
        }
        if batches[home]?.isEmpty == true { batches[home] = nil }
        return numbers
    }
}
