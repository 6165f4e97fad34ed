// core-bench: measures the home domain core without network.
//
//   core-bench cache   [--characteristics N]         cache reads and writes per second
//   core-bench commit  [--seconds S]                 durable writes/s with 1, 16, 256 writers queued
//   core-bench build   PATH [--accessories N]        builds a store of N accessories (5 characteristics each)
//   core-bench load    PATH                          opens it: load time, file size, RSS
import Dispatch
import Foundation
import HomeService
import Synchronization

let lightbulb = "00000043-0000-1000-8000-0026BB765291"
let characteristicTypes = ["25", "08", "13", "2F", "23"].map { "000000\($0)-0000-1000-8000-0026BB765291" }

func bulb(_ number: Int) -> AccessoryDescription {
    AccessoryDescription(
        name: "Lamp \(number)",
        category: 5,
        manufacturer: "Acme",
        model: "Bulb",
        services: [
            ServiceDescription(
                type: lightbulb,
                characteristics: zip(characteristicTypes, initialValues(number)).map {
                    CharacteristicDescription(type: $0, value: $1)
                }
            )
        ]
    )
}

/// On, Brightness, Hue, Saturation, Name.
func initialValues(_ number: Int) -> [CharacteristicValue] {
    [.bool(false), .int(Int64(number % 101)), .float(0), .float(0), .string("Lamp \(number)")]
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func residentMegabytes() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Double(line.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
}

func option(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return value }
    return Int(arguments[index + 1]) ?? value
}

/// Adds `count` bulbs to homes of 1,000 accessories each, and returns their characteristics.
func populate(_ store: HomeStore, owner: AccountID, accessories count: Int) throws -> [CharacteristicID] {
    var home = try store.addHome(named: "Home 0", as: owner)
    var ids: [CharacteristicID] = []
    ids.reserveCapacity(count * characteristicTypes.count)
    for number in 0..<count {
        if number > 0 && number % 1000 == 0 {
            home = try store.addHome(named: "Home \(number / 1000)", as: owner)
        }
        let accessory = try store.addAccessory(bulb(number), to: home.id, as: owner)[0]
        ids += try store.service(accessory.services[0], as: owner).characteristics
    }
    return ids
}

func benchCache() throws {
    let accessories = option("--characteristics", default: 500_000) / characteristicTypes.count
    let store = try HomeStore.open(.memory(InMemoryStorage()))
    let owner = store.owner!.id
    let ids = try populate(store, owner: owner, accessories: accessories)
    store.waitForCommits()
    let brightness = ids.enumerated().filter { $0.offset % characteristicTypes.count == 1 }.map(\.element)
    var random = SystemRandomNumberGenerator()
    let order = (0..<1_000_000).map { _ in brightness[Int.random(in: 0..<brightness.count, using: &random)] }
    let clock = ContinuousClock()

    var checksum: Int64 = 0
    var elapsed = clock.measure {
        for id in order {
            if case .int(let value)? = try? store.readValue(id, as: owner).value { checksum &+= value }
        }
    }
    print(String(format: "cache read, by id (auth + lookups): %.0f reads/s", Double(order.count) / seconds(elapsed)))

    let slots = try order.map { try store.readableSlot($0, as: owner) }
    elapsed = clock.measure {
        for slot in slots {
            if case .int(let value)? = store.cache[slot].value { checksum &+= value }
        }
    }
    print(String(format: "cache read, by slot: %.0f reads/s", Double(slots.count) / seconds(elapsed)))

    elapsed = clock.measure {
        for (index, id) in order.enumerated() {
            _ = try? store.writeValue(id, .int(Int64(index % 101)), as: owner)
        }
    }
    print(
        String(
            format: "cache write (checks, cache, event, row queued): %.0f writes/s",
            Double(order.count) / seconds(elapsed)
        )
    )
    elapsed = clock.measure { store.waitForCommits() }
    print(
        String(format: "  then the in-memory storage caught up in %.2f s (checksum %lld)", seconds(elapsed), checksum)
    )
}

/// Durable writes with `writers` always waiting: each acknowledged write is replaced by a new one.
func benchCommit(writers: Int, duration: Duration, path: String) throws {
    try? FileManager.default.removeItem(atPath: path)
    let inbox = Mutex<[CommitReport]>([])
    let wake = DispatchSemaphore(value: 0)
    let store = try HomeStore.open(.file(path: path)) { report in
        inbox.withLock { $0.append(report) }
        wake.signal()
    }
    let owner = store.owner!.id
    let ids = try populate(store, owner: owner, accessories: 100)
    store.waitForCommits()
    inbox.withLock { $0.removeAll() }
    let brightness = ids.enumerated().filter { $0.offset % characteristicTypes.count == 1 }.map(\.element)

    var acknowledged = 0
    var commits = 0
    var next = 0
    var latencies: [Duration] = []
    let clock = ContinuousClock()
    func submit() {
        let id = brightness[next % brightness.count]
        next += 1
        let started = clock.now
        _ = try? store.writeValue(id, .int(Int64(next % 101)), as: owner)
        store.afterCommit { _ in
            acknowledged += 1
            latencies.append(clock.now - started)
        }
    }
    let start = clock.now
    for _ in 0..<writers { submit() }
    while clock.now - start < duration {
        wake.wait()
        let reports = inbox.withLock { reports in
            defer { reports.removeAll() }
            return reports
        }
        commits += reports.count
        let before = acknowledged
        for report in reports { store.handle(report) }
        for _ in before..<acknowledged { submit() }
    }
    let elapsed = seconds(clock.now - start)
    store.waitForCommits()
    latencies.sort()
    let p50 = latencies.isEmpty ? 0 : seconds(latencies[latencies.count / 2]) * 1000
    let p99 = latencies.isEmpty ? 0 : seconds(latencies[latencies.count * 99 / 100]) * 1000
    print(
        String(
            format:
                "%4d writers: %8.0f durable writes/s, %6.0f commits/s, %6.1f writes/commit, p50 %.2f ms, p99 %.2f ms",
            writers,
            Double(acknowledged) / elapsed,
            Double(commits) / elapsed,
            Double(acknowledged) / Double(max(commits, 1)),
            p50,
            p99
        )
    )
}

func fileSize(_ path: String) -> Int {
    ["", "-wal"].map { ((try? FileManager.default.attributesOfItem(atPath: path + $0))?[.size] as? Int) ?? 0 }
        .reduce(0, +)
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "cache":
    try benchCache()
case "commit":
    let duration = Duration.seconds(option("--seconds", default: 5))
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("core-bench-commit.sqlite").path
    for writers in [1, 16, 256] { try benchCommit(writers: writers, duration: duration, path: path) }
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
case "build" where arguments.count >= 3:
    let path = arguments[2]
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    let count = option("--accessories", default: 100_000)
    let clock = ContinuousClock()
    let elapsed = try clock.measure {
        let store = try HomeStore.open(.file(path: path))
        _ = try populate(store, owner: store.owner!.id, accessories: count)
        if let failure = store.waitForCommits() { throw failure }
    }
    print(
        String(
            format: "built %d accessories in %.1f s; %.1f MB on disk",
            count,
            seconds(elapsed),
            Double(fileSize(path)) / 1e6
        )
    )
case "load" where arguments.count >= 3:
    let path = arguments[2]
    let before = residentMegabytes()
    let clock = ContinuousClock()
    var store: HomeStore?
    let elapsed = try clock.measure { store = try HomeStore.open(.file(path: path)) }
    print(
        String(
            format:
                "loaded %d homes, %d accessories, %d characteristics in %.2f s; file %.1f MB; RSS %.0f MB (%.0f MB before)",
            store!.counts.homes,
            store!.counts.accessories,
            store!.counts.characteristics,
            seconds(elapsed),
            Double(fileSize(path)) / 1e6,
            residentMegabytes(),
            before
        )
    )
default:
    print(
        "usage: core-bench cache [--characteristics N] | commit [--seconds S] | build PATH [--accessories N] | load PATH"
    )
    exit(64)
}
