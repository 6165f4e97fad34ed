import Foundation
import HomeProto
import RPCClient
import SwiftProtobuf
import UV
import Wire

/// The fleet on one loop: homes of simulated accessories paired through the real path (or attached
/// with the credentials of an earlier run), controllers that read and write their counters, one
/// subscriber per home, and the open-loop producers of each operation kind. When the server goes
/// away (a restart, a crash), each of them reconnects as the real thing would: accessories attach
/// again, controllers connect again, subscribers resume from the last revision they received.
final class Fleet {
    struct Plan {
        var scenario: FleetScenario
        var statePath: String
        /// Accessories per bridge; 0: each accessory on its own connection.
        var bridged: Int
    }

    /// What the fleet keeps between runs: each home's id and each link's ids and credential.
    struct State: Codable {
        struct Accessory: Codable {
            var id: Data
            var isBridge: Bool
            var counters: [FleetAccessory.Counter]
            var home: Int
            var credential: String
        }

        var homes: [Data]
        var accessories: [Accessory]
    }

    static let setupCode = "284-91-735"
    /// Values at or above this are controller writes; below, accessory reports (both ride the counter).
    static let writeFlag: UInt32 = 1 << 31
    /// Pairings (or attaches) under way at once during set-up.
    static let setupWindow = 64

    let loop: EventLoop
    let endpoint: Endpoint
    /// Every connection's settings (TLS among them).
    let configuration: ClientConnection.Configuration
    let plan: Plan
    private let authorization: [MetadataEntry]
    private(set) var homes: [Data] = []
    private(set) var accessories: [FleetAccessory] = []
    /// Every counter with the link that reports it and its home (what the load picks from).
    private var counters: [(link: FleetAccessory, counter: FleetAccessory.Counter)] = []
    private let controllers: FleetControllers
    private var subscribers: [FleetSubscriber] = []
    private let retries: RetrySchedule

    private(set) var reports = CallMeter()
    private(set) var reads = CallMeter()
    private(set) var writes = CallMeter()
    private(set) var notifications = CallMeter()
    private(set) var executions = CallMeter()
    /// Each home's scene: an action set writing the counters of its first three accessories.
    private var scenes: [Data] = []
    /// Homes whose scene is executing now (a second execution would get 65).
    private var scenesRunning: Set<Int> = []
    /// Executions not started because every scene was still running.
    private(set) var executionsDeferred = 0
    /// Reports acknowledged, events received for them, and updates a slow subscriber skipped.
    private(set) var reportsAcknowledged = 0
    private(set) var reportEvents = 0
    private(set) var skippedUpdates = 0
    /// Events for a report no newer than one already seen on the same characteristic: duplicates,
    /// or out of order (each accessory's reports commit in the order it sends them, so each
    /// characteristic's values only grow).
    private(set) var repeatedEvents = 0
    /// Reports whose events the server coalesced into a later value of the same counter (the
    /// subscriber fell behind: the event that came says how many it skipped).
    private(set) var coalescedReports = 0
    /// The newest report seen on each counter.
    private var lastReportSeen: [Data: UInt32] = [:]
    private(set) var linkFailures = 0
    /// Links open again after they ended, links given up (the server no longer knows the pairing),
    /// and the longest time from a link's end to its return.
    private(set) var relinks = 0
    private(set) var linksLost = 0
    private(set) var longestLinkOutage = Duration.zero
    /// Links ended and not yet back or given up.
    private(set) var linksDown = 0
    var controllerReconnects: Int { controllers.reconnects }
    private(set) var subscriptionEnds = 0
    private(set) var resumedSubscriptions = 0
    var resyncs: Int { subscribers.map(\.resyncs).reduce(0, +) }
    /// Whether set-up is over: from then on, what goes away comes back.
    private var isLoaded = false
    /// The reports not yet seen by their home's subscriber, by sequence number.
    private var pendingReports: [UInt32: PendingReport] = [:]

    /// A report not yet seen by its home's subscriber: when it was meant to start (its
    /// notification's latency counts from then), its counter, and whether the server answered it.
    private struct PendingReport {
        let start: ContinuousClock.Instant
        let characteristic: Data
        var isAcknowledged = false
    }
    private var nextReport: UInt32 = 0
    private var nextWrite: UInt32 = 0
    private var isStopping = false

    init(loop: EventLoop, endpoint: Endpoint, configuration: ClientConnection.Configuration, token: String, plan: Plan)
    {
        self.loop = loop
        self.endpoint = endpoint
        self.configuration = configuration
        self.plan = plan
        authorization = [MetadataEntry(key: "authorization", value: Array("Bearer \(token)".utf8))]
        retries = RetrySchedule(loop: loop)
        controllers = FleetControllers(
            loop: loop,
            endpoint: endpoint,
            configuration: configuration,
            authorization: authorization,
            retries: retries
        )
    }

    /// Fresh meters (each step of a rate sweep measures on its own).
    func resetMeters() {
        (reports, reads, writes, executions, notifications) = (
            CallMeter(), CallMeter(), CallMeter(), CallMeter(), CallMeter()
        )
    }

    var meters: [(String, CallMeter)] {
        [
            ("report", reports), ("read", reads), ("write", writes), ("execute", executions),
            ("notification", notifications),
        ]
    }

    // MARK: Set-up

    /// Connects the controllers, finds or makes the homes, links every accessory (pairing those
    /// the state file does not know), then opens one subscription per home.
    func setUp(_ done: @escaping (String?) -> Void) {
        controllers.connect(plan.scenario.controllers) { [self] error in
            if let error { return done("controllers: \(error)") }
            findHomes { [self] failure in
                if let failure { return done(failure) }
                linkAccessories { [self] failure in
                    if let failure { return done(failure) }
                    prepareScenes(from: 0) { [self] failure in
                        if let failure { return done(failure) }
                        subscribe { [self] failure in
                            isLoaded = failure == nil
                            controllers.keepsConnected = isLoaded
                            done(failure)
                        }
                    }
                }
            }
        }
    }

    private func findHomes(_ done: @escaping (String?) -> Void) {
        let state = Self.loadState(plan.statePath)
        controllers.call("ListHomes", Home_V1_ListHomesRequest(), Home_V1_ListHomesResponse.self) { [self] result in
            guard case .success(let listed) = result else { return done("ListHomes: \(result)") }
            let existing = Set(listed.homes.map(\.id))
            if let state, state.homes.count == plan.scenario.homes, state.homes.allSatisfy(existing.contains) {
                homes = state.homes
                accessories = state.accessories.map {
                    FleetAccessory(
                        id: $0.id,
                        isBridge: $0.isBridge,
                        counters: $0.counters,
                        home: $0.home,
                        credential: $0.credential
                    )
                }
            }
            addMissingHomes(done)
        }
    }

    private func addMissingHomes(_ done: @escaping (String?) -> Void) {
        guard homes.count < plan.scenario.homes else { return done(nil) }
        var request = Home_V1_AddHomeRequest()
        request.name = "Fleet \(homes.count + 1) \(UUID.random().uuidString.prefix(6))"
        controllers.call("AddHome", request, Home_V1_AddHomeResponse.self) { [self] result in
            guard case .success(let added) = result else { return done("AddHome: \(result)") }
            homes.append(added.home.id)
            addMissingHomes(done)
        }
    }

    /// Links every accessory, `setupWindow` at a time; new ones are paired by a controller.
    private func linkAccessories(_ done: @escaping (String?) -> Void) {
        for home in 0..<plan.scenario.homes {
            var present = accessories.filter { $0.home == home }.map(\.counters.count).reduce(0, +)
            while present < plan.scenario.accessoriesPerHome {
                let bridged = plan.bridged > 0 ? min(plan.bridged, plan.scenario.accessoriesPerHome - present) : 0
                accessories.append(FleetAccessory(home: home, bridged: bridged))
                present += max(bridged, 1)
            }
        }
        counters = accessories.flatMap { link in link.counters.map { (link, $0) } }
        var next = 0
        var linked = 0
        var failure: String?
        func startNext() {
            guard failure == nil else { return }
            guard next < accessories.count else { return }
            let accessory = accessories[next]
            let name = "Counter \(next + 1)"
            next += 1
            link(accessory, named: name) { error in
                if let error, failure == nil {
                    failure = error
                    done(error)
                    return
                }
                linked += 1
                if linked == self.accessories.count {
                    self.saveState()
                    done(nil)
                } else {
                    startNext()
                }
            }
        }
        for _ in 0..<min(Self.setupWindow, accessories.count) { startNext() }
        if accessories.isEmpty { done(nil) }
    }

    private func link(_ accessory: FleetAccessory, named name: String, _ done: @escaping (String?) -> Void) {
        let pairing = accessory.credential == nil
        accessory.onLinkEnded = { [weak self, weak accessory] error in
            guard let self, let accessory, !isStopping else { return }
            linkEnded(accessory, error)
        }
        accessory.link(to: endpoint, configuration: configuration, on: loop, name: name, setupCode: Self.setupCode) {
            [self] result in
            if case .failure(let error) = result { return done("\(name): \(error)") }
            guard pairing else { return done(nil) }
            accessory.onPaired = { _ in done(nil) }
            var request = Home_V1_AddAccessoryRequest()
            request.homeID = homes[accessory.home]
            request.accessoryID = accessory.id
            request.setupCode = Self.setupCode
            controllers.call("AddAccessory", request, Home_V1_AddAccessoryResponse.self) { result in
                if case .failure(let error) = result { done("AddAccessory \(name): \(error)") }
            }
        }
    }

    static let sceneName = "Fleet Scene"

    /// Finds each home's scene, or makes it: an action set writing the counters of the home's first
    /// three accessories (one home at a time).
    private func prepareScenes(from home: Int, _ done: @escaping (String?) -> Void) {
        guard home < homes.count else { return done(nil) }
        var request = Home_V1_GetHomeRequest()
        request.homeID = homes[home]
        controllers.call("GetHome", request, Home_V1_GetHomeResponse.self) { [self] result in
            guard case .success(let found) = result else { return done("GetHome: \(result)") }
            if let scene = found.home.actionSets.first(where: { $0.name == Self.sceneName && !$0.actions.isEmpty }) {
                scenes.append(scene.id)
                return prepareScenes(from: home + 1, done)
            }
            var add = Home_V1_AddActionSetRequest()
            add.homeID = homes[home]
            add.name = Self.sceneName
            controllers.call("AddActionSet", add, Home_V1_AddActionSetResponse.self) { [self] result in
                guard case .success(let added) = result else { return done("AddActionSet: \(result)") }
                let targets = counters.filter { $0.link.home == home }.prefix(3).map(\.counter.characteristic)
                addActions(Array(targets), to: added.actionSet.id, in: homes[home]) { [self] failure in
                    if let failure { return done(failure) }
                    scenes.append(added.actionSet.id)
                    prepareScenes(from: home + 1, done)
                }
            }
        }
    }

    private func addActions(_ targets: [Data], to scene: Data, in home: Data, _ done: @escaping (String?) -> Void) {
        guard let target = targets.first else { return done(nil) }
        var request = Home_V1_AddActionRequest()
        request.homeID = home
        request.actionSetID = scene
        request.action.id = FleetAccessory.randomID()
        request.action.characteristicID = target
        request.action.targetValue.unsignedValue = UInt64(Self.writeFlag)
        controllers.call("AddAction", request, Home_V1_AddActionResponse.self) { [self] result in
            guard case .success = result else { return done("AddAction: \(result)") }
            addActions(Array(targets.dropFirst()), to: scene, in: home, done)
        }
    }

    /// One subscription per home to its counters' value events; ready when each snapshot arrived.
    private func subscribe(_ done: @escaping (String?) -> Void) {
        let tally = ConnectionTally(plan.scenario.homes) { error in done(error.map { "subscribe: \($0)" }) }
        for (index, home) in homes.enumerated() {
            let subscriber = FleetSubscriber(
                home: home,
                characteristics: counters.filter { $0.link.home == index }.map(\.counter.characteristic),
                endpoint: endpoint,
                configuration: configuration,
                loop: loop,
                authorization: authorization,
                retries: retries
            )
            subscriber.onEvent = { [weak self] event in self?.received(event) }
            subscriber.onEnded = { [weak self] _ in
                guard let self, !isStopping else { return }
                subscriptionEnds += 1
                notifications.failed()
            }
            subscriber.onResumed = { [weak self] in self?.resumedSubscriptions += 1 }
            subscribers.append(subscriber)
            subscriber.open { tally.finished($0) }
        }
    }

    private func received(_ update: ValueEventReader.ValueUpdate) {
        // The server carries integers of every format as signed values.
        let number = update.number ?? -1
        // A report's sequence number, or nil for a controller's write.
        let reported = (0..<Int64(Self.writeFlag)).contains(number) ? UInt32(number) : nil
        if update.skippedUpdates > 0 {
            skippedUpdates += Int(update.skippedUpdates)
            coalesce(on: update.characteristicID, into: reported)
        }
        guard let value = reported else { return }
        reportEvents += 1
        if let last = lastReportSeen[update.characteristicID], value <= last { repeatedEvents += 1 }
        lastReportSeen[update.characteristicID] = max(value, lastReportSeen[update.characteristicID] ?? 0)
        guard let report = pendingReports.removeValue(forKey: value) else { return }
        notifications.record(since: report.start)
    }

    /// The server coalesced updates of `characteristic` into the event just received (its
    /// subscriber fell behind): the reports on it still waiting are settled by that event. Into a
    /// report, those before it; into a controller's write, those already acknowledged (committed,
    /// so before the write or coalesced with it too, bar a race with the write's own commit).
    /// Without this, a report coalesced away stayed waiting and showed as missing.
    private func coalesce(on characteristic: Data, into reported: UInt32?) {
        let superseded = pendingReports.filter { sequence, report in
            report.characteristic == characteristic && (reported.map { sequence < $0 } ?? report.isAcknowledged)
        }
        for sequence in superseded.keys { pendingReports[sequence] = nil }
        coalescedReports += superseded.count
    }

    // MARK: Coming back

    /// A link ended after set-up: attach again after a growing delay, unless the pairing is gone
    /// (the link ended OK with `unpaired`).
    private func linkEnded(_ accessory: FleetAccessory, _ error: RPCError?) {
        linkFailures += 1
        guard isLoaded, error != nil, accessory.credential != nil else {
            linksLost += 1
            return
        }
        linksDown += 1
        relink(accessory, downSince: .now)
    }

    private func relink(_ accessory: FleetAccessory, downSince: ContinuousClock.Instant) {
        retries.retry(attempt: accessory.relinkAttempts) { [weak self, weak accessory] in
            guard let self, let accessory, !isStopping else { return }
            accessory.relinkAttempts += 1
            accessory.link(to: endpoint, configuration: configuration, on: loop, name: "", setupCode: Self.setupCode) {
                [self] result in
                guard !isStopping else { return }
                switch result {
                case .success:
                    accessory.relinkAttempts = 0
                    relinks += 1
                    linksDown -= 1
                    longestLinkOutage = max(longestLinkOutage, downSince.duration(to: .now))
                case .failure(let error) where error.code == .unauthenticated:
                    // The server no longer knows the credential: the pairing is gone.
                    linksDown -= 1
                    linksLost += 1
                case .failure:
                    relink(accessory, downSince: downSince)
                }
            }
        }
    }

    // MARK: Load

    /// Starts the operations due now: reports on random accessories, reads and writes of random
    /// counters through the controllers. Latency counts from each intended start.
    func send(
        reports reportStarts: [ContinuousClock.Instant],
        reads readStarts: [ContinuousClock.Instant],
        writes writeStarts: [ContinuousClock.Instant],
        executions executionStarts: [ContinuousClock.Instant]
    ) {
        for start in executionStarts {
            // A scene that is running would answer 65: take another home's.
            let idle = (0..<scenes.count).filter { !scenesRunning.contains($0) }
            guard let home = idle.randomElement() else {
                executionsDeferred += 1
                continue
            }
            scenesRunning.insert(home)
            executions.start()
            var request = Home_V1_ExecuteActionSetRequest()
            request.homeID = homes[home]
            request.actionSetID = scenes[home]
            controllers.call("ExecuteActionSet", request, Home_V1_ExecuteActionSetResponse.self) { [self] result in
                scenesRunning.remove(home)
                executions.record(since: start, failed: isFailure(result))
            }
        }
        for start in reportStarts {
            guard let (accessory, counter) = counters.randomElement() else { break }
            let sequence = nextReport
            nextReport = (nextReport + 1) % Self.writeFlag
            reports.start()
            notifications.start()
            pendingReports[sequence] = PendingReport(start: start, characteristic: counter.characteristic)
            accessory.report(sequence, on: counter) { [self] result in
                if case .success = result {
                    reportsAcknowledged += 1
                    pendingReports[sequence]?.isAcknowledged = true
                } else {
                    pendingReports[sequence] = nil
                }
                reports.record(since: start, failed: isFailure(result))
            }
        }
        for start in readStarts {
            guard let (accessory, counter) = counters.randomElement() else { break }
            reads.start()
            var request = Home_V1_ReadCharacteristicRequest()
            request.homeID = homes[accessory.home]
            request.characteristicID = counter.characteristic
            controllers.call("ReadCharacteristic", request, Home_V1_ReadCharacteristicResponse.self) { [self] result in
                reads.record(since: start, failed: isFailure(result))
            }
        }
        for start in writeStarts {
            guard let (accessory, counter) = counters.randomElement() else { break }
            writes.start()
            var request = Home_V1_WriteCharacteristicRequest()
            request.homeID = homes[accessory.home]
            request.characteristicID = counter.characteristic
            request.value.unsignedValue = UInt64(Self.writeFlag | nextWrite)
            nextWrite = (nextWrite + 1) % Self.writeFlag
            controllers.call("WriteCharacteristic", request, Home_V1_WriteCharacteristicResponse.self) {
                [self] result in
                writes.record(since: start, failed: isFailure(result))
            }
        }
    }

    /// The server's resident memory and CPU time so far (`home.v1.ServerInfo/Get`).
    func serverUsage(_ done: @escaping (Home_V1_ServerInfoResponse?) -> Void) {
        controllers.serverUsage(done)
    }

    private func isFailure<T>(_ result: Result<T, RPCError>) -> Bool {
        if case .failure = result { return true }
        return false
    }

    /// Reports still waiting for their event (lost, or still on the way).
    var reportsInFlight: Int { pendingReports.count }

    /// Up to `limit` acknowledged reports still waiting for their event: each with its counter and
    /// the newest report its subscriber saw on that counter (newer than the report: the stream
    /// skipped it; older or none: it never came).
    func missingReports(limit: Int = 10) -> [(sequence: UInt32, characteristic: Data, newestSeen: UInt32?)] {
        pendingReports.filter(\.value.isAcknowledged).sorted { $0.key < $1.key }.prefix(limit).map {
            ($0.key, $0.value.characteristic, lastReportSeen[$0.value.characteristic])
        }
    }

    func stop() {
        isStopping = true
        retries.close()
        for accessory in accessories { accessory.close() }
        for subscriber in subscribers { subscriber.close() }
        controllers.close()
    }

    // MARK: State file

    private static func loadState(_ path: String) -> State? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(State.self, from: data)
    }

    /// Written with mode 0600: the credentials are secrets.
    private func saveState() {
        let state = State(
            homes: homes,
            accessories: accessories.compactMap { accessory in
                accessory.credential.map {
                    State.Accessory(
                        id: accessory.id,
                        isBridge: accessory.isBridge,
                        counters: accessory.counters,
                        home: accessory.home,
                        credential: $0
                    )
                }
            }
        )
        guard let data = try? JSONEncoder().encode(state) else { return }
        _ = FileManager.default.createFile(
            atPath: plan.statePath,
            contents: data,
            attributes: [.posixPermissions: 0o600]
        )
    }
}
