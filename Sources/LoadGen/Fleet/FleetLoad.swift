import ArgumentParser
import Foundation
import Histogram
import HomeProto
import TLSOptions
import UV

/// `loadgen fleet`: a population of simulated accessories and the controllers that use them, both
/// faces of the server loaded at once from one loop thread, open loop, latency from each
/// operation's intended start.
struct FleetLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract:
            "Simulated accessories (each on its own connection, or bridges of them) and controllers, at fixed rates.",
        discussion: """
            The first run pairs every accessory through the real path (Advertise, then AddAccessory with \
            its setup code) and keeps the credentials in --state; later runs with the same shape attach \
            with them. Each accessory has one counter characteristic; one subscriber per home follows the \
            counters, so a report's notification latency is measured from the report's intended start to \
            the event. Every write the server forwards is accepted by its accessory at once. When the \
            server goes away (restarted, or killed), accessories attach again, controllers reconnect and \
            subscribers resume from their last revision, each after a growing, jittered delay; the \
            report says how many came back and how long the longest link was down.
            """
    )

    @Option(help: "Server address: HOST:PORT or unix:PATH.")
    var endpoint = "127.0.0.1:7420"

    @Option(help: "File with a bearer token of an account that may add homes.")
    var tokenFile = "homed-owner.token"

    @Option(help: "A preset: small-home, apartment-block or 10k-accessories (the options below override it).")
    var preset: FleetScenario.Preset?

    @Option(
        help:
            "A scenario file: JSON with any of homes, accessories_per_home, controllers, report_rate, read_rate, write_rate, execute_rate."
    )
    var scenarioFile: String?

    @Option(help: "Homes (default 2).")
    var homes: Int?

    @Option(help: "Accessories per home, each on its own connection (default 10).")
    var accessories: Int?

    @Option(help: "Controller connections for reads, writes and set-up (default 4).")
    var controllers: Int?

    @Option(help: "Value reports per second from the accessories, in all, Poisson arrivals (default 100).")
    var reportRate: Double?

    @Option(help: "Cached reads per second from the controllers, in all (default 100).")
    var readRate: Double?

    @Option(help: "Writes per second from the controllers, each forwarded to its accessory and back (default 50).")
    var writeRate: Double?

    @Option(help: "Action set executions per second, in all: each home's scene writes three accessories (default 5).")
    var executeRate: Double?

    @Option(help: "Seconds to measure.")
    var duration = 10.0

    @Option(help: "Seconds to run before measuring.")
    var warmup = 1.0

    @Option(help: "Put this many accessories behind each bridge (one connection per bridge); 0: each on its own.")
    var bridged = 0

    @Option(help: "Where the homes and the accessories' credentials are kept between runs.")
    var state = "loadgen-fleet.json"

    @Flag(help: "Print one JSON object instead of the table.")
    var json = false

    @OptionGroup(title: "TLS")
    var tls: TLSClientOptions

    @Flag(help: "No progress line on standard error every second.")
    var noProgress = false

    @Option(
        help: """
            Rate sweep: up to this many steps, step k offering k times every rate (each with its warm-up             and duration), stopping after the first saturated step; reports each step and the knee.
            """
    )
    var rateSweep: Int?

    @Option(help: "In a sweep, a step whose p99 of any kind exceeds this many milliseconds is saturated.")
    var kneeP99Ms = 100.0

    func validate() throws {
        guard duration > 0, warmup >= 0 else { throw ValidationError("--duration must be positive") }
        guard (rateSweep ?? 1) > 0 else { throw ValidationError("--rate-sweep must be positive") }
        guard (0...150).contains(bridged) else {
            throw ValidationError("--bridged must be within 0...150 (HAP's limit)")
        }
        try scenario().validate()
        guard Endpoint(parsing: endpoint) != nil else {
            throw ValidationError("--endpoint must be HOST:PORT or unix:PATH")
        }
    }

    /// The preset or the scenario file, then the options given.
    func scenario() throws -> FleetScenario {
        guard preset == nil || scenarioFile == nil else {
            throw ValidationError("give --preset or --scenario-file, not both")
        }
        var scenario = try scenarioFile.map(FleetScenario.load) ?? preset?.scenario ?? FleetScenario()
        if let homes { scenario.homes = homes }
        if let accessories { scenario.accessoriesPerHome = accessories }
        if let controllers { scenario.controllers = controllers }
        if let reportRate { scenario.reportRate = reportRate }
        if let readRate { scenario.readRate = readRate }
        if let writeRate { scenario.writeRate = writeRate }
        if let executeRate { scenario.executeRate = executeRate }
        return scenario
    }

    func run() throws {
        let scenario = try scenario()
        // A connection per accessory, or per bridge of `bridged` accessories.
        let linksPerHome =
            bridged > 0
            ? (scenario.accessoriesPerHome + bridged - 1) / bridged : scenario.accessoriesPerHome
        let needed = scenario.homes * linksPerHome + scenario.controllers + scenario.homes + 64
        let available = OpenFileLimit.raise(toAtLeast: needed)
        guard available >= needed else {
            throw ValidationError(
                "the fleet needs \(needed) open files but the limit is \(available): raise the hard limit (ulimit -Hn) or run fewer accessories"
            )
        }
        guard let token = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
            throw ValidationError("cannot read the token file \(tokenFile)")
        }
        let loop = try EventLoop()
        let fleet = Fleet(
            loop: loop,
            endpoint: Endpoint(parsing: endpoint)!,
            configuration: try tls.homeRPCConfiguration(),
            token: token.trimmingCharacters(in: .whitespacesAndNewlines),
            plan: Fleet.Plan(scenario: scenario, statePath: state, bridged: bridged)
        )
        let phases = LoopTimer(loop: loop)
        let ticker = LoopTimer(loop: loop)
        let progress = LoopTimer(loop: loop)
        // Ctrl-C ends the run early; the report still comes.
        let interrupt = try SignalWatcher(signal: SIGINT, loop: loop) {
            ticker.stop()
            for (_, meter) in fleet.meters where meter.isMeasuring { meter.stopMeasuring() }
            loop.stop()
        }
        var setupFailure: String?
        let setupStart = ContinuousClock.now
        var setupSeconds = 0.0
        var steps: [SweepStep] = []
        let recorder = ProgressLine(fleet: fleet, printing: !noProgress)
        // The client's own stalls delay calls as much as the server's: count them for the report.
        var clientStalls: LoopStallWatch?
        let lastStep = rateSweep ?? 1
        /// Step `factor`: every rate times `factor`, warm-up, measurement, then the next step unless
        /// this one saturated.
        func run(step factor: Int) {
            fleet.resetMeters()
            Self.drive(fleet, ticker: ticker, factor: Double(factor))
            phases.start(after: .milliseconds(Int(warmup * 1000))) {
                for (_, meter) in fleet.meters { meter.startMeasuring() }
                phases.start(after: .milliseconds(Int(duration * 1000))) {
                    ticker.stop()
                    for (_, meter) in fleet.meters { meter.stopMeasuring() }
                    // What is on the way may still arrive; then count.
                    phases.start(after: .milliseconds(500)) {
                        steps.append(
                            SweepStep(
                                factor: factor,
                                scenario: scenario,
                                fleet: fleet,
                                p99Limit: UInt64(kneeP99Ms * 1000)
                            )
                        )
                        if factor < lastStep && !steps.last!.isSaturated { run(step: factor + 1) } else { loop.stop() }
                    }
                }
            }
        }
        fleet.setUp { failure in
            setupSeconds = Self.seconds(setupStart.duration(to: .now))
            if let failure {
                setupFailure = failure
                loop.stop()
                return
            }
            recorder.start(on: progress)
            let started = ContinuousClock.now
            clientStalls = LoopStallWatch(loop: loop, threshold: Self.clientStallThreshold) { [noProgress] stall in
                guard !noProgress, stall.busy >= .milliseconds(50) else { return }
                let at = Self.seconds(started.duration(to: .now))
                FileHandle.standardError.write(
                    Data(
                        ("loadgen's loop stalled \(stall.busy.wholeMicroseconds / 1000) ms "
                            + "(\(stall.onCPU.wholeMicroseconds / 1000) on the CPU) at \(String(format: "%.1f", at)) s\n")
                            .utf8
                    )
                )
            }
            run(step: 1)
        }
        loop.run()
        for timer in [phases, ticker, progress] { timer.close() }
        let stalls = (count: clientStalls?.stallCount ?? 0, longest: clientStalls?.longestStall?.busy ?? .zero)
        clientStalls?.close()
        interrupt.close()
        fleet.stop()
        if let setupFailure { throw ValidationError("set-up failed: \(setupFailure)") }
        if rateSweep == nil {
            report(fleet, scenario, setupSeconds: setupSeconds, clientStalls: stalls, timeline: recorder.timelineJSON)
        } else {
            SweepStep.report(steps, json: json, timeline: recorder.timelineJSON)
        }
    }

    /// Every millisecond, starts what each kind's schedule says is due.
    private static func drive(_ fleet: Fleet, ticker: LoopTimer, factor: Double) {
        let start = ContinuousClock.now
        let scenario = fleet.plan.scenario
        var reports = PoissonSchedule(rate: scenario.reportRate * factor, start: start)
        var reads = PoissonSchedule(rate: scenario.readRate * factor, start: start)
        var writes = PoissonSchedule(rate: scenario.writeRate * factor, start: start)
        var executions = PoissonSchedule(rate: scenario.executeRate * factor, start: start)
        ticker.start(after: .zero, repeating: .milliseconds(1)) {
            let now = ContinuousClock.now
            fleet.send(
                reports: reports.due(by: now),
                reads: reads.due(by: now),
                writes: writes.due(by: now),
                executions: executions.due(by: now)
            )
        }
    }

    /// The acknowledged reports that never reached their subscriber, for diagnosis.
    static func missingReportsJSON(_ fleet: Fleet) -> String {
        fleet.missingReports().map { report in
            let id = report.characteristic.map { String(format: "%02x", $0) }.joined()
            return "{\"sequence\": \(report.sequence), \"characteristic\": \"\(id)\", "
                + "\"newest_seen\": \(report.newestSeen.map(String.init) ?? "null")}"
        }.joined(separator: ", ")
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Loop iterations at least this busy count as stalls of the client in the report.
    static let clientStallThreshold = Duration.milliseconds(10)

    private func report(
        _ fleet: Fleet,
        _ scenario: FleetScenario,
        setupSeconds: Double,
        clientStalls: (count: Int, longest: Duration),
        timeline: String
    ) {
        let longestStallMs = clientStalls.longest.wholeMicroseconds / 1000
        let (homes, accessories, controllers) = (scenario.homes, scenario.accessoriesPerHome, scenario.controllers)
        let offered = scenario.ratesByKind
        if json {
            var kinds: [String] = []
            for (name, meter) in fleet.meters {
                let histogram = meter.latency
                kinds.append(
                    "\"\(name)\": {\"offered_per_second\": \(offered[name] ?? 0), \"completed\": \(meter.completed), "
                        + "\"errors\": \(meter.errors), \"per_second\": \(String(format: "%.1f", Double(meter.completed) / meter.measuredSeconds)), "
                        + "\"p50_us\": \(histogram.valueAtPercentile(50)), \"p99_us\": \(histogram.valueAtPercentile(99)), "
                        + "\"p999_us\": \(histogram.valueAtPercentile(99.9)), \"max_us\": \(histogram.max)}"
                )
            }
            print(
                "{\"homes\": \(homes), \"accessories\": \(homes * accessories), \"setup_seconds\": \(String(format: "%.2f", setupSeconds)), "
                    + "\"seconds\": \(String(format: "%.3f", fleet.reports.measuredSeconds)), "
                    + "\"reports_acknowledged\": \(fleet.reportsAcknowledged), \"report_events\": \(fleet.reportEvents), "
                    + "\"skipped_updates\": \(fleet.skippedUpdates), \"reports_without_event\": \(fleet.reportsInFlight), "
                    + "\"repeated_events\": \(fleet.repeatedEvents), \"coalesced_reports\": \(fleet.coalescedReports), "
                    + "\"missing_reports\": [\(Self.missingReportsJSON(fleet))], "
                    + "\"link_failures\": \(fleet.linkFailures), \"relinks\": \(fleet.relinks), "
                    + "\"links_lost\": \(fleet.linksLost), \"links_down\": \(fleet.linksDown), "
                    + "\"longest_link_outage_ms\": \(fleet.longestLinkOutage.wholeMicroseconds / 1000), "
                    + "\"controller_reconnects\": \(fleet.controllerReconnects), "
                    + "\"subscription_ends\": \(fleet.subscriptionEnds), \"resumed_subscriptions\": \(fleet.resumedSubscriptions), "
                    + "\"resyncs\": \(fleet.resyncs), \"executions_deferred\": \(fleet.executionsDeferred), "
                    + "\"client_stalls\": \(clientStalls.count), \"client_longest_stall_ms\": \(longestStallMs), "
                    + kinds.joined(separator: ", ") + ", \"timeline\": \(timeline)}"
            )
            return
        }
        print(
            "\(homes) homes × \(accessories) accessories (set up in \(String(format: "%.2f", setupSeconds)) s), "
                + "\(controllers) controllers, \(String(format: "%.1f", fleet.reports.measuredSeconds)) s measured"
        )
        print("| kind | offered/s | completed/s | errors | p50 µs | p99 µs | p99.9 µs | max µs |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for (name, meter) in fleet.meters {
            let histogram = meter.latency
            print(
                "| \(name) | \(String(format: "%.0f", offered[name] ?? 0)) | "
                    + "\(String(format: "%.0f", Double(meter.completed) / meter.measuredSeconds)) | \(meter.errors) | "
                    + "\(histogram.valueAtPercentile(50)) | \(histogram.valueAtPercentile(99)) | "
                    + "\(histogram.valueAtPercentile(99.9)) | \(histogram.max) |"
            )
        }
        print(
            "reports acknowledged \(fleet.reportsAcknowledged), their events \(fleet.reportEvents) "
                + "(+\(fleet.skippedUpdates) updates coalesced, \(fleet.coalescedReports) of them acknowledged reports; "
                + "\(fleet.repeatedEvents) repeated or out of order), "
                + "without an event \(fleet.reportsInFlight), link failures \(fleet.linkFailures), "
                + "executions deferred (every scene running) \(fleet.executionsDeferred)"
        )
        if fleet.linkFailures > 0 || fleet.controllerReconnects > 0 || fleet.subscriptionEnds > 0 {
            print(
                "links ended \(fleet.linkFailures): back \(fleet.relinks) (the longest down "
                    + "\(fleet.longestLinkOutage.wholeMicroseconds / 1000) ms), given up \(fleet.linksLost), still down \(fleet.linksDown); "
                    + "controllers reconnected \(fleet.controllerReconnects); subscriptions ended \(fleet.subscriptionEnds), "
                    + "resumed \(fleet.resumedSubscriptions), resyncs \(fleet.resyncs)"
            )
        }
        print(
            "loadgen's own loop stalled \(clientStalls.count) times for 10 ms or more (longest \(longestStallMs) ms): "
                + "calls due meanwhile started late, and their latency counts it"
        )
    }
}

/// Once a second: what each kind completed in that second (kept for the JSON timeline) and, unless
/// quiet, a line on standard error with errors, the p99 so far, and the server's memory and CPU.
final class ProgressLine {
    let fleet: Fleet
    let printing: Bool
    /// Each second's completions per kind, warm-ups included.
    private(set) var timeline: [[String: Int]] = []
    private var last: [String: Int] = [:]
    private var lastCPU: UInt64?
    private var seconds = 0

    init(fleet: Fleet, printing: Bool) {
        self.fleet = fleet
        self.printing = printing
    }

    func start(on timer: LoopTimer) {
        timer.start(after: .seconds(1), repeating: .seconds(1)) { [self] in tick() }
    }

    /// The timeline as a JSON array.
    var timelineJSON: String {
        "["
            + timeline.enumerated().map { index, second in
                "{\"second\": \(index + 1), "
                    + second.keys.sorted().map { "\"\($0)\": \(second[$0]!)" }.joined(separator: ", ") + "}"
            }.joined(separator: ", ") + "]"
    }

    private func tick() {
        seconds += 1
        var second: [String: Int] = [:]
        for (name, meter) in fleet.meters {
            // A sweep's next step starts its meters from zero.
            second[name] = meter.total >= (last[name] ?? 0) ? meter.total - (last[name] ?? 0) : meter.total
            last[name] = meter.total
        }
        timeline.append(second)
        guard printing else { return }
        let kinds = fleet.meters.map { "\($0.0) \(second[$0.0] ?? 0)/s" }
        let errors = fleet.meters.map(\.1.errors).reduce(0, +)
        let p99 = fleet.meters.map {
            "\($0.0) \(String(format: "%.1f", Double($0.1.latency.valueAtPercentile(99)) / 1000))"
        }
        let down = fleet.linksDown > 0 ? "  links down \(fleet.linksDown)" : ""
        let prefix =
            "[\(String(format: "%3d", seconds))s] " + kinds.joined(separator: "  ")
            + "  errors \(errors)\(down)  p99 ms: "
            + p99.joined(separator: " ")
        fleet.serverUsage { [self] info in
            var line = prefix
            if let info {
                let cpu = info.cpuUserMs + info.cpuSystemMs
                // A server that restarted since the last second counts its CPU time from zero again.
                let share =
                    lastCPU.flatMap { $0 <= cpu ? String(format: "%.0f%%", Double(cpu - $0) / 10) : nil } ?? "-"
                lastCPU = cpu
                line += "  server RSS \(info.residentBytes / 1_048_576) MB CPU \(share)"
            }
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }
}
