internal import SQLite

/// An account's idempotency key, hashed once: the key's string hash is computed when the key is
/// made and the tables hash only that and the account (hashing the string at each of a keyed
/// write's five lookups and touches cost about 6,800 instructions a write).
struct IdempotencyKey: Hashable {
    let account: AccountID
    let key: String
    /// The string's hash, seeded per process like every `Hasher`, so a client cannot choose keys
    /// that collide.
    private let keyHash: Int

    init(account: AccountID, key: String) {
        self.account = account
        self.key = key
        self.keyHash = key.hashValue
    }

    static func == (left: Self, right: Self) -> Bool {
        left.keyHash == right.keyHash && left.account == right.account && left.key == right.key
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(account)
        hasher.combine(keyHash)
    }

    func _rawHashValue(seed: Int) -> Int {
        account._rawHashValue(seed: seed ^ keyHash)
    }
}

/// The remembered outcomes of mutations sent with an idempotency key, each account's oldest first,
/// and the rows they are stored in.
///
/// An account's records of one commit share a row of `idempotency_batch` (written with the commit,
/// as the records' changes are), and a row is deleted once none of its records is remembered. A row
/// per record cost the writer an insert and, once the account was at its 10,000 keys, a delete per
/// keyed write: about 28,000 instructions, three times the rest of the write. An account forgets its
/// records oldest first, so its rows empty in the order they were written: the store holds at most
/// one partly forgotten row per account beyond what is remembered.
struct IdempotencyRecords {
    typealias Record = HomeStore.IdempotencyRecord

    /// What forgetting a record needs to know of it, beside its key: forgetting read the record
    /// itself (a copy, three references retained and released) for two of its fields.
    private struct Entry {
        let key: IdempotencyKey
        let createdAt: Int64
        let byteCount: Int
        let row: Int64
    }

    private var records: [IdempotencyKey: Record] = [:]
    /// Each account's records, oldest first.
    private var order: [AccountID: FrontDroppingArray<Entry>] = [:]
    /// What each account's records count towards ``HomeStore/idempotencyBytesPerAccount``.
    private var bytes: [AccountID: Int] = [:]
    /// How many remembered records each stored row holds.
    private var liveRecordsByRow: [Int64: Int] = [:]
    /// The rows taking each account's records of the batch not yet handed to the writer.
    private var openRows: [AccountID: Int64] = [:]
    private var nextRow: Int64 = 1
    /// What the load read, account by account, before ``finishLoading()`` keeps the latest of each key.
    private var loaded: [AccountID: [Record]] = [:]
    private var loadedRows: [Int64] = []

    subscript(key: IdempotencyKey) -> Record? { records[key] }

    /// The accounts that have records.
    var accounts: [AccountID] { Array(order.keys) }

    /// Remembers `record` under `key` (not held), in its account's open row. Returns the row when it
    /// was opened for this record: the caller touches it, so that it is written with the batch.
    mutating func add(_ record: Record, as key: IdempotencyKey) -> Int64? {
        var record = record
        var opened: Int64?
        if let row = openRows[key.account] {
            record.row = row
        } else {
            record.row = nextRow
            openRows[key.account] = nextRow
            opened = nextRow
            nextRow += 1
        }
        liveRecordsByRow[record.row, default: 0] += 1
        bytes[key.account, default: 0] += record.byteCount
        order[key.account, default: FrontDroppingArray()].append(
            Entry(key: key, createdAt: record.createdAt, byteCount: record.byteCount, row: record.row)
        )
        records[key] = record
        return opened
    }

    /// Forgets the account's oldest records while they are at or before `cutoff` (milliseconds since
    /// the epoch) or over `countLimit` records or `byteLimit` bytes, and calls `emptied` with each
    /// row left with no record.
    mutating func forget(
        of account: AccountID,
        createdThrough cutoff: Int64,
        countLimit: Int,
        byteLimit: Int,
        emptied: (Int64) -> Void
    ) {
        // Taken out of the table, not copied: a copy left the table's reference behind, and the
        // first key dropped then copied all 10,000 of a busy account's keys, on every keyed write.
        guard var entries = order.removeValue(forKey: account) else { return }
        var count = entries.count
        var total = bytes[account] ?? 0
        // Looked at first and then dropped: `popFirst(if:)` copied each entry three times.
        while let entry = entries.first, count > countLimit || total > byteLimit || entry.createdAt <= cutoff {
            entries.removeFirst(1)
            count -= 1
            total -= entry.byteCount
            records[entry.key] = nil
            let emptiesRow = liveRecordsByRow.mutateValue(forKey: entry.row) { live in
                live -= 1
                return live == 0
            }
            if emptiesRow == true {
                liveRecordsByRow[entry.row] = nil
                emptied(entry.row)
            }
        }
        if !entries.isEmpty { order[account] = entries }
        bytes[account] = entries.isEmpty ? nil : total
    }

    /// Closes the open rows: the batch that writes them is going to the writer, and the next
    /// batch's records go in new ones.
    mutating func closeOpenRows() {
        if !openRows.isEmpty { openRows.removeAll(keepingCapacity: true) }
    }

    /// The change that brings a touched row to its state now: written with the records it holds,
    /// or deleted when it holds none. Only an open row can hold records when touched (a row is
    /// touched when opened and when emptied).
    func rowChange(_ row: Int64) -> StoreChange {
        guard liveRecordsByRow[row] != nil,
            let account = openRows.first(where: { $0.value == row })?.key,
            let entries = order[account]
        else {
            return .delete(StoreSchema.idempotencyBatch, key: [.integer(row)])
        }
        // The open row's records are the account's newest.
        var start = entries.count
        var byteCount = 0
        while start > 0, entries[start - 1].row == row {
            start -= 1
            byteCount += entries[start].byteCount
        }
        return .upsert(
            StoreSchema.idempotencyBatch,
            RowCoding.idempotencyRow(
                row,
                account,
                (start..<entries.count).lazy.compactMap { records[entries[$0].key] },
                byteCount: byteCount + 32 * (entries.count - start)
            )
        )
    }

    // MARK: Loading

    /// Takes a stored row's records (rows in the order they were written).
    mutating func load(row: Int64, account: AccountID, records rowRecords: [Record]) {
        loadedRows.append(row)
        nextRow = max(nextRow, row + 1)
        loaded[account, default: []].append(
            contentsOf: rowRecords.map { record in
                var record = record
                record.row = row
                return record
            }
        )
    }

    /// Remembers what ``load(row:account:records:)`` took, the latest record of each key (an older
    /// one of the same key was forgotten before the key was used again), and returns the rows that
    /// hold none of them.
    mutating func finishLoading() -> [Int64] {
        for (account, accountRecords) in loaded {
            var latest: [String: Int] = [:]
            for (index, record) in accountRecords.enumerated() { latest[record.key] = index }
            for (index, record) in accountRecords.enumerated() where latest[record.key] == index {
                let key = IdempotencyKey(account: account, key: record.key)
                records[key] = record
                order[account, default: FrontDroppingArray()].append(
                    Entry(key: key, createdAt: record.createdAt, byteCount: record.byteCount, row: record.row)
                )
                bytes[account, default: 0] += record.byteCount
                liveRecordsByRow[record.row, default: 0] += 1
            }
        }
        loaded = [:]
        defer { loadedRows = [] }
        return loadedRows.filter { liveRecordsByRow[$0] == nil }
    }
}
