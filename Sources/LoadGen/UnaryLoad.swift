import ArgumentParser
import Foundation
import Histogram
import RPCClient
import UV
import Wire

/// Closed-loop unary load: every connection keeps `depth` calls in flight and starts a new one as
/// each completes, for `duration` seconds after a warm-up. One loop thread drives all connections,
/// like redis-benchmark's single thread.
struct UnaryLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unary",
        abstract: "Pipelined unary calls on N connections; prints calls/s and latency percentiles."
    )

    @Option(help: "Server address: HOST:PORT or unix:PATH.")
    var endpoint = "127.0.0.1:7420"

    @Option(help: "Connections to open.")
    var connections = 1

    @Option(help: "Calls in flight per connection (pipeline depth).")
    var depth = 1

    @Option(help: "Seconds to measure.")
    var duration = 10.0

    @Option(help: "Seconds to run before measuring.")
    var warmup = 1.0

    @Option(help: "Method to call.")
    var method = "home.v1.Health/Check"

    @Option(help: "Request payload as hex (default: an empty message).")
    var requestHex = ""

    @Option(help: "File with the bearer token each connection authenticates with (its first call carries it).")
    var tokenFile: String?

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func validate() throws {
        guard connections > 0, depth > 0, duration > 0, warmup >= 0 else {
            throw ValidationError("--connections, --depth and --duration must be positive")
        }
        _ = try parsedEndpoint()
    }

    func parsedEndpoint() throws -> Endpoint {
        guard let parsed = Endpoint(parsing: endpoint) else {
            throw ValidationError("--endpoint must be HOST:PORT or unix:PATH")
        }
        return parsed
    }

    func run() throws {
        let request = try Self.bytes(fromHex: requestHex)
        var authorization: [MetadataEntry] = []
        if let tokenFile {
            guard let token = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
                throw ValidationError("cannot read --token-file \(tokenFile)")
            }
            let bearer = "Bearer " + token.trimmingCharacters(in: .whitespacesAndNewlines)
            authorization = [MetadataEntry(key: "authorization", value: Array(bearer.utf8))]
        }
        let loop = try EventLoop()
        let driver = UnaryDriver(method: method, request: request, depth: depth, authorization: authorization)
        var connected: [ClientConnection] = []
        var failures: [RPCError] = []
        for _ in 0..<connections {
            try ClientConnection.connect(to: try parsedEndpoint(), on: loop) { result in
                switch result {
                case .success(let connection): connected.append(connection)
                case .failure(let error): failures.append(error)
                }
                if connected.count + failures.count == connections { loop.stop() }
            }
        }
        loop.run()
        guard failures.isEmpty else {
            throw ValidationError("\(failures.count) of \(connections) connections failed: \(failures[0])")
        }

        let phases = LoopTimer(loop: loop)
        phases.start(after: .zero) {
            for connection in connected { connection.batch { driver.drive(connection) } }
            phases.start(after: .milliseconds(Int(warmup * 1000))) {
                driver.startMeasuring()
                phases.start(after: .milliseconds(Int(duration * 1000))) {
                    driver.stopMeasuring()
                    loop.stop()
                }
            }
        }
        loop.run()
        driver.isStopping = true
        phases.close()
        for connection in connected { connection.close() }
        try loop.close()
        report(driver)
    }

    private func report(_ driver: UnaryDriver) {
        let seconds = driver.measuredSeconds
        let rate = Double(driver.completed) / seconds
        let histogram = driver.latency
        if json {
            let fields: [(String, String)] = [
                ("connections", "\(connections)"), ("depth", "\(depth)"), ("seconds", String(format: "%.3f", seconds)),
                ("calls", "\(driver.completed)"), ("errors", "\(driver.errors)"),
                ("calls_per_second", String(format: "%.0f", rate)),
                ("p50_us", "\(histogram.valueAtPercentile(50))"), ("p90_us", "\(histogram.valueAtPercentile(90))"),
                ("p99_us", "\(histogram.valueAtPercentile(99))"), ("max_us", "\(histogram.max)"),
            ]
            print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            print("\(connections) connections × depth \(depth), \(method), \(String(format: "%.1f", seconds)) s")
            print("calls: \(driver.completed)  errors: \(driver.errors)  calls/s: \(String(format: "%.0f", rate))")
            print(
                "latency µs: p50 \(histogram.valueAtPercentile(50))  p90 \(histogram.valueAtPercentile(90))  "
                    + "p99 \(histogram.valueAtPercentile(99))  p99.9 \(histogram.valueAtPercentile(99.9))  max \(histogram.max)"
            )
        }
    }

    static func bytes(fromHex hex: String) throws -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace })
        guard digits.count % 2 == 0 else { throw ValidationError("--request-hex needs an even number of digits") }
        return try stride(from: 0, to: digits.count, by: 2).map { index in
            guard let byte = UInt8(String(digits[index...index + 1]), radix: 16) else {
                throw ValidationError("--request-hex has a non-hex digit")
            }
            return byte
        }
    }
}

/// Keeps every connection's pipeline full and records each call's latency while measuring.
final class UnaryDriver {
    let method: String
    let request: [UInt8]
    let depth: Int
    private(set) var latency = Histogram<UInt64>(
        highestTrackableValue: 60_000_000,
        numberOfSignificantValueDigits: .three
    )
    private(set) var completed = 0
    private(set) var errors = 0
    private var isMeasuring = false
    var isStopping = false
    private var measureStart = ContinuousClock.now
    private var measureEnd = ContinuousClock.now

    /// Sent with each connection's first call only: it authenticates the connection.
    let authorization: [MetadataEntry]
    private var authenticated: Set<ObjectIdentifier> = []

    init(method: String, request: [UInt8], depth: Int, authorization: [MetadataEntry]) {
        self.method = method
        self.request = request
        self.depth = depth
        self.authorization = authorization
    }

    var measuredSeconds: Double {
        let (seconds, attoseconds) = measureStart.duration(to: measureEnd).components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    func startMeasuring() {
        isMeasuring = true
        measureStart = .now
    }

    func stopMeasuring() {
        isMeasuring = false
        measureEnd = .now
    }

    func drive(_ connection: ClientConnection) {
        for _ in 0..<depth { call(on: connection) }
    }

    private func call(on connection: ClientConnection) {
        guard !isStopping, connection.isOpen else { return }
        let start = ContinuousClock.now
        let metadata = authenticated.insert(ObjectIdentifier(connection)).inserted ? authorization : []
        connection.unary(method, request: request, metadata: metadata) { [unowned self] result in
            if self.isMeasuring {
                _ = self.latency.record(start.duration(to: .now).wholeMicroseconds)
                if case .failure = result { self.errors += 1 } else { self.completed += 1 }
            }
            self.call(on: connection)
        }
    }
}
