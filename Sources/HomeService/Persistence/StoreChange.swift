internal import SQLite

/// One row-level change the writer applies; a mutation is a list of them, committed together.
enum StoreChange: Sendable {
    /// Insert the row, or replace the row with the same key.
    case upsert(StoreTable, [SQLValue])
    /// A home's change: encoded by the writer, together with the commit's other events of its home
    /// (``EventBatches``), so the loop only hands it over. A reference, shared with the log and
    /// the subscribers' queues.
    case event(HomeChange)
    /// Delete the row with this key (the table's key columns, in order).
    case delete(StoreTable, key: [SQLValue])
    /// A characteristic's cached value (the hot path: two columns, not the whole row). The id and the
    /// value stay as they are until bound: most value writes of a busy characteristic are
    /// overwritten within their commit and never need their bytes.
    case setValue(characteristic: UniqueIdentifier, value: CharacteristicValue?, time: Int64)
    /// An accessory's reachability only (every accessory's changes at each start and link).
    case setReachable(accessory: [UInt8], reachable: Bool)
    /// Drop a home's events up to and including `revision` (retention).
    case trimEvents(home: [UInt8], throughRevision: Int64)
}

extension Array where Element == StoreChange {
    /// Which changes are value writes that a later value write of the same characteristic in this
    /// list overwrites (`nil` when none is). A commit needs only each characteristic's last value:
    /// both columns are set whole, whatever happens to the row in between, and the events keep
    /// every value. Under a steady stream of one characteristic's updates this halves the rows a
    /// group commit writes.
    func overwrittenValueWrites() -> [Bool]? {
        var later: Set<UniqueIdentifier> = []
        var overwritten: [Bool]?
        for index in indices.reversed() {
            guard case .setValue(let characteristic, _, _) = self[index] else { continue }
            if !later.insert(characteristic).inserted {
                if overwritten == nil { overwritten = [Bool](repeating: false, count: count) }
                overwritten?[index] = true
            }
        }
        return overwritten
    }
}

/// Reads committed rows at start-up, by one thread at a time.
protocol TableReader: AnyObject, Sendable {
    /// Hands every row of `table` to `body`, in the table's order, one at a time. Called before the
    /// writer starts.
    func forEachRow(of table: StoreTable, _ body: (any StoredRow) throws(StoreError) -> Void) throws(StoreError)
    /// How many rows `table` has (to reserve room before reading them).
    func rowCount(of table: StoreTable) throws(StoreError) -> Int
}

/// Where committed rows live: an SQLite file, or memory (for tests and throwaway servers).
protocol StoreBackend: TableReader {
    /// Applies every change in one transaction: all of them or none. Called on the writer thread only.
    func apply(_ changes: [StoreChange]) throws(StoreError) -> CommitTiming
    /// A second reader of the same rows, for loading a table on another thread while this backend
    /// reads others.
    func makeReader() throws(StoreError) -> any TableReader
    /// Writes a consistent copy of what is committed to a new file at `path` and returns its size
    /// in bytes. Called on the writer thread only, between commits.
    /// - Throws: 1 when `path` exists, 3 when it cannot be created, 48 for a store without a file,
    ///   52 when writing the copy failed.
    func writeCopy(to path: String) throws(HomeServiceError) -> Int64
}

/// A stored row as the loader reads it: SQLite's current row, read in place, or an array of values
/// (``InMemoryStorage``). The typed readers answer `nil` for a column of another storage class.
/// None is generic: a generic requirement is not specialised across the SQLite module's boundary,
/// and the loader reads millions of columns.
protocol StoredRow {
    var count: Int { get }
    /// The column's value, copied out.
    subscript(column: Int) -> SQLValue { get }
    func isNull(_ column: Int) -> Bool
    func integer(_ column: Int) -> Int64?
    func text(_ column: Int) -> String?
    func blob(_ column: Int) -> [UInt8]?
    /// A 16-byte blob column as an identifier.
    func identifier(_ column: Int) -> UniqueIdentifier?
}

extension Statement.Row: StoredRow {
    func identifier(_ column: Int) -> UniqueIdentifier? {
        words128(column).map { UniqueIdentifier(high: $0.high, low: $0.low) }
    }
}

extension Array: StoredRow where Element == SQLValue {
    func isNull(_ column: Int) -> Bool { self[column] == .null }
    func integer(_ column: Int) -> Int64? { self[column].integer }
    func text(_ column: Int) -> String? { self[column].text }
    func blob(_ column: Int) -> [UInt8]? { self[column].blob }
    func identifier(_ column: Int) -> UniqueIdentifier? { self[column].blob.flatMap { UniqueIdentifier(bytes: $0) } }
}

/// Where a commit's time went, for reports of slow ones.
public struct CommitTiming: Sendable {
    /// Running the statements (rows written, events trimmed).
    public var statements: Duration = .zero
    /// COMMIT itself: with WAL and `synchronous=FULL`, the WAL's fsync (and any checkpoint).
    public var commit: Duration = .zero
    /// Row changes in the commit.
    public var changes = 0

    public var total: Duration { statements + commit }
}

/// A commit's events gathered into `event_batch` rows' contents: each home's in the order they were
/// emitted (its revisions, consecutive), homes in the order they first came, at most
/// ``maxEventsPerBatch`` per batch. The writer takes them before each trim of events and at the
/// end: a trim (or a home's removal) then drops what came before it in the commit, as it did when
/// each event was a row of its own.
struct EventBatches {
    /// A burst (thousands of accessories becoming reachable at once) makes several rows of at most
    /// about 25 KB rather than one huge one.
    static let maxEventsPerBatch = 512

    /// In the order they came. Nearly every commit's events are of one home: they are batched as
    /// they lie, and only a commit that mixes homes is grouped. (A list per home, and a dictionary
    /// entry even for the only home, cost the writer about 330 instructions an event.)
    private var events: [HomeChange] = []
    private var mixesHomes = false

    /// - Parameter capacity: about how many events the commit holds (its row changes will do).
    init(capacity: Int = 0) {
        events.reserveCapacity(capacity)
    }

    var isEmpty: Bool { events.isEmpty }

    mutating func add(_ event: HomeChange) {
        if !mixesHomes, let first = events.first, first.home != event.home { mixesHomes = true }
        events.append(event)
    }

    /// The batches gathered since the last take.
    mutating func take() -> [ArraySlice<HomeChange>] {
        defer {
            // Not emptied in place: the slices returned share the storage.
            events = []
            mixesHomes = false
        }
        if events.isEmpty { return [] }
        if !mixesHomes, events.count <= Self.maxEventsPerBatch { return [events[...]] }
        return (mixesHomes ? Self.groupedByHome(events) : [events]).flatMap { events in
            stride(from: 0, to: events.count, by: Self.maxEventsPerBatch).map { start in
                events[start..<min(start + Self.maxEventsPerBatch, events.count)]
            }
        }
    }

    /// Each home's events in their order, homes in the order they first came.
    private static func groupedByHome(_ events: [HomeChange]) -> [[HomeChange]] {
        var groups: [[HomeChange]] = []
        var indexOfHome: [HomeID: Int] = [:]
        for event in events {
            if let index = indexOfHome[event.home] {
                groups[index].append(event)
            } else {
                indexOfHome[event.home] = groups.count
                groups.append([event])
            }
        }
        return groups
    }
}
