import Foundation
import Synchronization
import Testing

@testable import HomeService

/// The two kinds of storage every store test runs against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    case memory
    case file

    var testDescription: String { rawValue }
}

/// A clock the test moves by hand (milliseconds since the Unix epoch).
final class ManualClock: Sendable {
    private let time = Mutex<Int64>(1_800_000_000_000)  // 2027-01-15, on a whole minute

    var now: Int64 { time.withLock { $0 } }
    func advance(by milliseconds: Int64) { time.withLock { $0 += milliseconds } }
}

/// A store on one kind of storage, that can be closed and reopened on the same data.
final class StoreHarness {
    let kind: StoreKind
    let clock = ManualClock()
    let retention: EventRetention
    let limits: ObjectLimits
    private let memory = InMemoryStorage()
    let directory: URL
    private(set) var store: HomeStore
    let owner: AccountID
    let ownerToken: String

    init(_ kind: StoreKind, retention: EventRetention = EventRetention(), limits: ObjectLimits = ObjectLimits()) throws
    {
        self.kind = kind
        self.retention = retention
        self.limits = limits
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("homestore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let location: HomeStore.Location =
            kind == .memory ? .memory(memory) : .file(path: directory.appendingPathComponent("home.sqlite").path)
        let clock = self.clock
        store = try HomeStore.open(
            location,
            configuration: HomeStore.Configuration(retention: retention, limits: limits, clock: { clock.now })
        )
        owner = store.owner!.id
        ownerToken = store.newOwnerToken!
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    var path: String { directory.appendingPathComponent("home.sqlite").path }

    var location: HomeStore.Location { kind == .memory ? .memory(memory) : .file(path: path) }

    /// Waits for every commit, drops the store and opens a new one on the same storage.
    func reopen() throws {
        store.waitForCommits()
        let clock = self.clock
        store = try HomeStore.open(
            location,
            configuration: HomeStore.Configuration(retention: retention, limits: limits, clock: { clock.now })
        )
    }

    /// Rows of `table` in the storage (committed ones: wait for commits first).
    /// The events the event batch rows hold (a commit's events of a home share a row).
    func storedEventCount() throws -> Int {
        try storedEventBatchSizes().reduce(0, +)
    }

    /// How many events each event batch row holds.
    func storedEventBatchSizes() throws -> [Int] {
        try storedEventBatches().map(\.count)
    }

    /// The events each event batch row holds, in the table's order.
    func storedEventBatches() throws -> [[HomeChange]] {
        let reader: any TableReader =
            switch kind {
            case .memory: memory
            case .file: try SQLiteStorage(path: path)
            }
        var batches: [[HomeChange]] = []
        try reader.forEachRow(of: StoreSchema.eventBatch) { (row) throws(StoreError) in
            batches.append(try RowCoding.changes(inBatch: row))
        }
        return batches
    }

    func rowCount(of table: StoreTable) throws -> Int {
        switch kind {
        case .memory: return try memory.rowCount(of: table)
        case .file: return try SQLiteStorage(path: path).rowCount(of: table)
        }
    }

    /// A new account, made by the owner.
    func account(_ name: String) throws -> AccountID {
        try store.createAccount(named: name, by: owner).id
    }
}

/// Advertised accessories built from the standard catalog.
enum Accessories {
    static let lightbulb = "00000043-0000-1000-8000-0026BB765291"
    static let on = "00000025-0000-1000-8000-0026BB765291"
    static let brightness = "00000008-0000-1000-8000-0026BB765291"
    static let name = "00000023-0000-1000-8000-0026BB765291"
    static let temperatureSensor = "0000008A-0000-1000-8000-0026BB765291"
    static let currentTemperature = "00000011-0000-1000-8000-0026BB765291"
    static let switchService = "00000049-0000-1000-8000-0026BB765291"
    static let identify = "00000014-0000-1000-8000-0026BB765291"

    /// A dimmable lightbulb: On, Brightness, Name.
    static func bulb(_ name: String = "Lamp") -> AccessoryDescription {
        AccessoryDescription(
            name: name,
            category: 5,
            manufacturer: "Acme",
            model: "Bulb 1",
            services: [
                ServiceDescription(
                    type: lightbulb,
                    isPrimary: true,
                    characteristics: [
                        CharacteristicDescription(type: on, value: .bool(false)),
                        CharacteristicDescription(type: brightness, value: .int(50)),
                        CharacteristicDescription(type: Self.name, value: .string(name)),
                    ]
                )
            ]
        )
    }

    /// A temperature sensor: Current Temperature (read-only, events).
    static func sensor(_ name: String = "Thermometer") -> AccessoryDescription {
        AccessoryDescription(
            name: name,
            category: 10,
            services: [
                ServiceDescription(
                    type: temperatureSensor,
                    characteristics: [CharacteristicDescription(type: currentTemperature, value: .float(21))]
                )
            ]
        )
    }

    /// A bridge with the given accessories behind it.
    static func bridge(_ name: String = "Bridge", behind: [AccessoryDescription]) -> AccessoryDescription {
        AccessoryDescription(
            name: name,
            category: 2,
            manufacturer: "Acme",
            model: "Hub",
            services: [],
            bridgedAccessories: behind
        )
    }
}

extension HomeStore {
    /// The characteristic of `type` on an accessory.
    func characteristic(ofType type: String, on accessory: AccessoryID) -> Characteristic {
        let ids = accessories[accessory]!.services.flatMap { services[$0]!.characteristics }
        return ids.map { characteristics[$0]! }.first { $0.type == type }!
    }
}

/// The HomeKit code of what `body` threw, or `nil` if it did not throw.
/// (Any other error reads as `unexpectedError`, so a test expecting a HomeKit code fails.)
func codeThrown(_ body: () throws -> Void) -> HomeKitErrorCode? {
    do {
        try body()
        return nil
    } catch {
        return (error as? HomeServiceError)?.code ?? .unexpectedError
    }
}
