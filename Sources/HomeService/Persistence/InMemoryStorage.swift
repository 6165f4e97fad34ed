internal import SQLite
import Synchronization

/// Committed rows held in memory: a store without a file, for tests and throwaway servers. Reopening
/// a ``HomeStore`` on the same storage loads what was committed, exactly as from a file.
public final class InMemoryStorage: StoreBackend {
    private struct Tables {
        /// Rows by table name, then by key.
        var rows: [String: [[SQLValue]: [SQLValue]]] = [:]
        /// Event batch rows by home, in revision order: trimming drops a prefix instead of scanning
        /// every home's events.
        var events: [[UInt8]: FrontDroppingArray<[SQLValue]>] = [:]
    }

    private let tables = Mutex(Tables())

    public init() {}

    func apply(_ changes: [StoreChange]) throws(StoreError) -> CommitTiming {
        tables.withLock { state in
            var events = EventBatches(capacity: changes.count)
            // As in a file: a commit's events of a home in one row, written before each trim.
            func writeEvents() {
                for batch in events.take() {
                    state.events[batch.first!.home.raw.bytes, default: FrontDroppingArray()]
                        .append(RowCoding.eventBatch(batch))
                }
            }
            for change in changes {
                switch change {
                case .event(let change):
                    events.add(change)
                case .upsert(let table, let row):
                    state.rows[table.name, default: [:]][Array(row.prefix(table.keyColumnCount))] = row
                case .delete(let table, let key):
                    state.rows[table.name]?[key] = nil
                case .setValue(let characteristic, let value, let time):
                    let key: [SQLValue] = [.blob(characteristic.bytes)]
                    guard var row = state.rows[StoreSchema.characteristic.name]?[key] else { continue }
                    row[RowCoding.characteristicValueColumn] = RowCoding.value(value)
                    row[RowCoding.characteristicValueColumn + 1] = .integer(time)
                    state.rows[StoreSchema.characteristic.name]?[key] = row
                case .setReachable(let accessory, let reachable):
                    let key: [SQLValue] = [.blob(accessory)]
                    state.rows[StoreSchema.accessory.name]?[key]?[RowCoding.accessoryReachableColumn] = .bool(reachable)
                case .trimEvents(let home, let revision):
                    writeEvents()
                    // Whole batches: the first and last revision within the trim.
                    state.events[home]?.removeFirst { ($0[2].integer ?? 0) <= revision }
                    if state.events[home]?.isEmpty == true { state.events[home] = nil }
                }
            }
            writeEvents()
        }
        return CommitTiming(changes: changes.count)
    }

    func forEachRow(of table: StoreTable, _ body: (any StoredRow) throws(StoreError) -> Void) throws(StoreError) {
        for row in rows(of: table) { try body(row) }
    }

    func rowCount(of table: StoreTable) throws(StoreError) -> Int {
        rows(of: table).count
    }

    /// Itself: its tables are behind a lock.
    func makeReader() throws(StoreError) -> any TableReader { self }

    func writeCopy(to path: String) throws(HomeServiceError) -> Int64 {
        throw HomeServiceError(
            .operationNotSupported,
            "this server keeps its store in memory: there is no file to back up"
        )
    }

    private func rows(of table: StoreTable) -> [[SQLValue]] {
        if table == StoreSchema.eventBatch {
            return tables.withLock { state in
                state.events.keys.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { state.events[$0]!.elements }
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
