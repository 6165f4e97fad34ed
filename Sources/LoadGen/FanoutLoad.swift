import ArgumentParser
import Foundation
import Histogram
import HomeProto
import SwiftProtobuf
import TLSOptions
import UV

/// Change fan-out: one characteristic's value changes at an open-loop rate, delivered to N
/// subscribers; against `homed` (Subscribe; WriteCharacteristic, or the accessory's own ReportValues)
/// or Redis (SUBSCRIBE, PUBLISH), with the same loop, timing and histogram code. Prints deliveries/s
/// and latency from when each change was sent to its delivery.
struct FanoutLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Change notifications to N subscribers at a target change rate; deliveries/s and latency."
    )

    enum Target: String, ExpressibleByArgument {
        case homerpc, redis
    }

    @Option(help: "homerpc or redis.")
    var target: Target = .homerpc

    @Option(help: "Server address: HOST:PORT or unix:PATH.")
    var endpoint = "127.0.0.1:7420"

    @Option(help: "Subscribers that read everything.")
    var subscribers = 1

    @Option(help: "More subscribers that never take what they are sent (they must not slow the others).")
    var stalled = 0

    @Option(help: "Changes per second (open loop).")
    var rate = 1000.0

    @Option(help: "Producer connections.")
    var producers = 4

    @Option(help: "Seconds to measure.")
    var duration = 5.0

    @Option(help: "Seconds to run before measuring.")
    var warmup = 1.0

    @Option(help: "homerpc: file with a bearer token of a member of the home.")
    var tokenFile: String?

    @Option(help: "homerpc: the home's id (base64, as rpc-client --json prints it).")
    var homeID: String?

    @Option(help: "homerpc: the characteristic to write (base64); an unsigned integer format without limits.")
    var characteristicID: String?

    @Option(
        help: """
            homerpc: make the changes as the characteristic's accessory, reporting each new value on \
            its link, instead of as a controller writing it; the file is the accessory's --state file \
            from `rpc-client accessory simulate` (stop the simulator first: the link replaces its own). \
            The accessory's one link is then the only producer (--producers does not apply).
            """
    )
    var reportAsAccessory: String?

    /// Redis pub/sub has no flow control of its own (only TCP's, and its output-buffer limit); a
    /// subscriber that grants the SDK's default of 64 messages at a time waits for its own credit
    /// frames at 100 subscribers x 20,000 changes/s, and the server coalesces what waits meanwhile.
    @Option(help: "homerpc: messages each subscriber lets the server send ahead (its stream credit).")
    var streamCredit: UInt32 = 1024

    @OptionGroup(title: "TLS")
    var tls: TLSClientOptions

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @Option(
        help: """
            Append the run's latency histogram to this file, one "microseconds count" line per \
            recorded value, so that several runs can be pooled into one set of percentiles.
            """
    )
    var histogramFile: String?

    func validate() throws {
        guard subscribers > 0, stalled >= 0, producers > 0, rate > 0, duration > 0, warmup >= 0, streamCredit > 0 else {
            throw ValidationError("--subscribers, --producers, --rate, --duration and --stream-credit must be positive")
        }
        guard Endpoint(parsing: endpoint) != nil else {
            throw ValidationError("--endpoint must be HOST:PORT or unix:PATH")
        }
        if target == .redis, reportAsAccessory != nil {
            throw ValidationError("--report-as-accessory is for --target homerpc")
        }
        if target == .homerpc, tokenFile == nil || homeID == nil || characteristicID == nil {
            throw ValidationError("--target homerpc needs --token-file, --home-id and --characteristic-id")
        }
    }

    func run() throws {
        let loop = try EventLoop()
        let meter = FanoutMeter(rate: rate)
        let server = Endpoint(parsing: endpoint)!
        let fanout: any FanoutTarget
        switch target {
        case .redis:
            fanout = RedisFanout(loop: loop, endpoint: server, meter: meter, tls: try tls.context(offering: []))
        case .homerpc:
            guard let token = try? String(contentsOfFile: tokenFile!, encoding: .utf8),
                let home = Data(base64Encoded: homeID!), let characteristic = Data(base64Encoded: characteristicID!)
            else { throw ValidationError("cannot read --token-file, or --home-id / --characteristic-id is not base64") }
            let reporter = try reportAsAccessory.map { try Self.accessory(inStateFile: $0, reporting: characteristic) }
            fanout = HomeRPCFanout(
                loop: loop,
                endpoint: server,
                meter: meter,
                token: token.trimmingCharacters(in: .whitespacesAndNewlines),
                home: home,
                characteristic: characteristic,
                streamCredit: streamCredit,
                configuration: try tls.homeRPCConfiguration(),
                reporter: reporter
            )
        }
        var failure: (any Error)?
        try fanout.connectSubscribers(count: subscribers + stalled, stalled: stalled) { error in
            failure = error
            loop.stop()
        }
        loop.run()
        try fanout.connectProducers(count: producers) { error in
            failure = failure ?? error
            loop.stop()
        }
        loop.run()
        if let failure { throw ValidationError("connecting failed: \(failure)") }

        // Production ticks every millisecond; the subscriptions settle during the warm-up.
        let ticker = LoopTimer(loop: loop)
        let phases = LoopTimer(loop: loop)
        meter.begin()
        ticker.start(after: .zero, repeating: .milliseconds(1)) {
            meter.produce { fanout.send($0) }
        }
        phases.start(after: .milliseconds(Int(warmup * 1000))) {
            meter.deliveries.startMeasuring()
            phases.start(after: .milliseconds(Int(duration * 1000))) {
                meter.deliveries.stopMeasuring()
                loop.stop()
            }
        }
        loop.run()
        ticker.close()
        phases.close()
        fanout.close()
        report(meter)
        if let histogramFile { try Self.append(meter.deliveries.latency, to: histogramFile) }
    }

    /// The paired accessory of a simulator's state file, as a fleet accessory with one counter.
    private static func accessory(inStateFile path: String, reporting characteristic: Data) throws -> FleetAccessory {
        struct SimulatorState: Decodable {
            var descriptionJSON: String
            var credential: String?
        }
        guard let data = FileManager.default.contents(atPath: path),
            let state = try? JSONDecoder().decode(SimulatorState.self, from: data),
            let description = try? Home_V1_AccessoryDescription(jsonString: state.descriptionJSON),
            let credential = state.credential
        else { throw ValidationError("\(path) is not the state file of a paired simulated accessory") }
        return FleetAccessory(
            id: description.id,
            isBridge: false,
            counters: [FleetAccessory.Counter(accessory: description.id, characteristic: characteristic)],
            home: 0,
            credential: credential
        )
    }

    private static func append(_ histogram: Histogram<UInt64>, to path: String) throws {
        let lines = histogram.recordedValues().map { "\($0.value) \($0.count)\n" }.joined()
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw ValidationError("cannot create \(path)")
            }
        }
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? file.close() }
        try file.seekToEnd()
        try file.write(contentsOf: Data(lines.utf8))
    }

    private func report(_ meter: FanoutMeter) {
        let seconds = meter.deliveries.measuredSeconds
        let histogram = meter.deliveries.latency
        let changesPerSecond = Double(meter.sent) / seconds
        let deliveriesPerSecond = Double(meter.deliveries.completed) / seconds
        if json {
            let fields: [(String, String)] = [
                ("target", "\"\(target.rawValue)\""), ("subscribers", "\(subscribers)"), ("stalled", "\(stalled)"),
                ("rate", String(format: "%.0f", rate)), ("seconds", String(format: "%.3f", seconds)),
                ("changes_per_second", String(format: "%.0f", changesPerSecond)),
                ("deliveries_per_second", String(format: "%.0f", deliveriesPerSecond)),
                ("errors", "\(meter.deliveries.errors)"),
                ("p50_us", "\(histogram.valueAtPercentile(50))"), ("p99_us", "\(histogram.valueAtPercentile(99))"),
                ("max_us", "\(histogram.max)"),
            ]
            print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            print(
                "\(target.rawValue): \(subscribers) subscribers (+\(stalled) stalled), \(Int(rate)) changes/s offered"
            )
            print(
                "changes/s: \(String(format: "%.0f", changesPerSecond))  deliveries/s: "
                    + "\(String(format: "%.0f", deliveriesPerSecond))  errors: \(meter.deliveries.errors)"
            )
            print(
                "latency µs (change sent → delivered): p50 \(histogram.valueAtPercentile(50))  "
                    + "p99 \(histogram.valueAtPercentile(99))  max \(histogram.max)"
            )
        }
    }
}
