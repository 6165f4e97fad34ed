internal import SQLite
import Synchronization

/// Committed rows held in memory: a store without a file, for tests and throwaway servers. Reopening
/// a ``HomeStore`` on the same storage loads what was committed, exactly as from a file.
public final class InMemoryStorage: StoreBackend {
    private let tables = Mutex<[String: [[SQLValue]: [SQLValue]]]>([:])

    public init() {}

    func apply(_ changes: [StoreChange]) throws(StoreError) {
        tables.withLock { tables in
            for change in changes {
                switch change {
                case .upsert(let table, let row):
                    tables[table.name, default: [:]][Array(row.prefix(table.keyColumnCount))] = row
                case .delete(let table, let key):
                    tables[table.name]?[key] = nil
                case .setValue(let characteristic, let value, let time):
                    let table = StoreSchema.characteristic
                    guard var row = tables[table.name]?[[.blob(characteristic)]] else { continue }
                    row[RowCoding.characteristicValueColumn] = value
                    row[RowCoding.characteristicValueColumn + 1] = .integer(time)
                    tables[table.name]?[[.blob(characteristic)]] = row
                case .trimEvents(let home, let revision):
                    tables[StoreSchema.event.name] = tables[StoreSchema.event.name]?.filter { key, _ in
                        key[0] != .blob(home) || (key[1].integer ?? 0) > revision
                    }
                }
            }
        }
    }

    func rows(of table: StoreTable) throws(StoreError) -> [[SQLValue]] {
        let rows = tables.withLock { Array(($0[table.name] ?? [:]).values) }
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
