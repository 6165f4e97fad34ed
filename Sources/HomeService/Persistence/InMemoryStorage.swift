internal import SQLite
import Synchronization

/// Committed rows held in memory: a store without a file, for tests and throwaway servers. Reopening
/// a ``HomeStore`` on the same storage loads what was committed, exactly as from a file.
public final class InMemoryStorage: StoreBackend {
    private struct Tables {
        /// Rows by table name, then by key.
        var rows: [String: [[SQLValue]: [SQLValue]]] = [:]
        /// Event rows by home, in revision order: trimming drops a prefix instead of scanning every
        /// home's events.
        var events: [[UInt8]: EventRows] = [:]
    }

    /// One home's event rows; trimmed rows are skipped by `head` and dropped in bulk (amortised O(1)).
    private struct EventRows {
        var rows: [[SQLValue]] = []
        var head = 0

        var live: ArraySlice<[SQLValue]> { rows[head...] }

        mutating func append(_ row: [SQLValue]) {
            if head < rows.count, let last = rows.last, last[1] == row[1] { rows.removeLast() }
            rows.append(row)
        }

        mutating func trim(through revision: Int64) {
            while head < rows.count, (rows[head][1].integer ?? 0) <= revision { head += 1 }
            if head > 0 && head >= rows.count / 2 {
                rows.removeFirst(head)
                head = 0
            }
        }
    }

    private let tables = Mutex(Tables())

    public init() {}

    func apply(_ changes: [StoreChange]) throws(StoreError) {
        tables.withLock { state in
            for change in changes {
                switch change {
                case .upsert(let table, let row) where table == StoreSchema.event:
                    // Revisions only grow, so an event row appends (a rewrite would replace the last).
                    state.events[row[0].blob ?? [], default: EventRows()].append(row)
                case .upsert(let table, let row):
                    state.rows[table.name, default: [:]][Array(row.prefix(table.keyColumnCount))] = row
                case .delete(let table, let key):
                    state.rows[table.name]?[key] = nil
                case .setValue(let characteristic, let value, let time):
                    let key: [SQLValue] = [.blob(characteristic)]
                    guard var row = state.rows[StoreSchema.characteristic.name]?[key] else { continue }
                    row[RowCoding.characteristicValueColumn] = value
                    row[RowCoding.characteristicValueColumn + 1] = .integer(time)
                    state.rows[StoreSchema.characteristic.name]?[key] = row
                case .trimEvents(let home, let revision):
                    state.events[home]?.trim(through: revision)
                    if state.events[home]?.live.isEmpty == true { state.events[home] = nil }
                }
            }
        }
    }

    func forEachRow(of table: StoreTable, _ body: ([SQLValue]) throws(StoreError) -> Void) throws(StoreError) {
        for row in rows(of: table) { try body(row) }
    }

    private func rows(of table: StoreTable) -> [[SQLValue]] {
        if table == StoreSchema.event {
            return tables.withLock { state in
                state.events.keys.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { state.events[$0]!.live }
            }
        }
        let rows = tables.withLock { Array(($0.rows[table.name] ?? [:]).values) }
        let order = table.orderBy.split(separator: ",").map { column in
            table.columns.firstIndex(of: column.trimmingCharacters(in: " "))!
        }
        return rows.sorted { left, right in
            for index in order where left[index] != right[index] {
                return Self.precedes(left[index], right[index])
            }
            return false
        }
    }

    private static func precedes(_ left: SQLValue, _ right: SQLValue) -> Bool {
        switch (left, right) {
        case (.integer(let a), .integer(let b)): a < b
        case (.blob(let a), .blob(let b)): a.lexicographicallyPrecedes(b)
        case (.text(let a), .text(let b)): a < b
        default: false
        }
    }
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in character: Character) -> String {
        String(drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}
