import ArgumentParser
import Foundation
import Histogram
import RPCClient
import TLSOptions
import UV
import Wire

/// Closed-loop unary load: every connection keeps `depth` calls in flight and starts a new one as
/// each completes, for `duration` seconds after a warm-up. One loop thread drives all connections,
/// like redis-benchmark's single thread.
struct UnaryLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unary",
        abstract: "Pipelined unary calls (or Redis commands) on N connections; prints calls/s and latency percentiles."
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

    @Option(help: "Make exactly this many calls, measured from the first, instead of --duration and --warmup.")
    var calls: Int?

    @Option(
        help: """
            Open loop: start this many calls per second in all, whatever the answers (--depth is then the \
            most in flight per connection); latency counts from each call's intended start.
            """
    )
    var rate: Double?

    enum Target: String, ExpressibleByArgument {
        case homerpc, redis
    }

    @Option(help: "homerpc, or redis (RESP over the same loop, pipelining and timing: one client for both).")
    var target: Target = .homerpc

    @Option(help: "redis: GET or SET (of one 2-byte value).")
    var redisCommand = "GET"

    @Option(help: "Method to call.")
    var method = "home.v1.Health/Check"

    @Option(help: "Request payload as hex (default: an empty message).")
    var requestHex = ""

    @Option(help: "File with the bearer token each connection authenticates with (its first call carries it).")
    var tokenFile: String?

    @Option(help: "Each call's deadline in milliseconds, as the Swift SDK sends it (30 s by default); 0 for none.")
    var timeoutMs: UInt32 = 30_000

    @Flag(help: "Send a fresh idempotency-key with every call, as the SDK does with every mutation.")
    var idempotencyKeys = false

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @OptionGroup(title: "TLS")
    var tls: TLSClientOptions

    func validate() throws {
        guard connections > 0, depth > 0, duration > 0, warmup >= 0, (calls ?? 1) > 0, (rate ?? 1) > 0 else {
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
        let loop = try EventLoop()
        let meter = CallMeter()
        let drivers: [any PipelinedDriver]
        switch target {
        case .homerpc: drivers = try connectHomeRPC(loop: loop, meter: meter)
        case .redis: drivers = try connectRedis(loop: loop, meter: meter)
        }

        let phases = LoopTimer(loop: loop)
        if let calls {
            // A fixed number of calls from the first one (for instruction counts), no warm-up.
            meter.limit = (
                calls,
                {
                    meter.stopMeasuring()
                    loop.stop()
                }
            )
            meter.startMeasuring()
            for driver in drivers { driver.fill() }
            loop.run()
            phases.close()
            for driver in drivers { driver.stop() }
            report(meter)
            return
        }
        let ticker = LoopTimer(loop: loop)
        defer { ticker.close() }
        phases.start(after: .zero) {
            if let rate {
                Self.startOpenLoop(ticker, rate: rate, drivers: drivers)
            } else {
                for driver in drivers { driver.fill() }
            }
            phases.start(after: .milliseconds(Int(warmup * 1000))) {
                meter.startMeasuring()
                phases.start(after: .milliseconds(Int(duration * 1000))) {
                    meter.stopMeasuring()
                    loop.stop()
                }
            }
        }
        loop.run()
        phases.close()
        for driver in drivers { driver.stop() }
        report(meter)
    }

    /// Every millisecond, starts the calls that are due by now, spread over the connections that have
    /// room (one write per connection per tick); calls that find no room wait for the next tick, and
    /// their lateness counts.
    private static func startOpenLoop(_ ticker: LoopTimer, rate: Double, drivers: [any PipelinedDriver]) {
        let schedule = OpenLoopSchedule(rate: rate)
        var next: UInt64 = 0
        var turn = 0
        var starts: [ContinuousClock.Instant] = []
        ticker.start(after: .zero, repeating: .milliseconds(1)) {
            let due = schedule.dueCount
            starts.removeAll(keepingCapacity: true)
            // No more than the connections can take now: a client that is behind must not spend its
            // tick listing calls it cannot start.
            let room = drivers.reduce(0) { $0 + max(0, $1.room) }
            while next + UInt64(starts.count) < due, starts.count < room {
                starts.append(schedule.intendedStart(of: next + UInt64(starts.count)))
            }
            var offset = 0
            for index in drivers.indices where offset < starts.count {
                let driver = drivers[(turn + index) % drivers.count]
                let share = (starts.count - offset + (drivers.count - index) - 1) / (drivers.count - index)
                let taken = min(share, driver.room)
                driver.send(intendedAt: starts[offset..<(offset + taken)])
                offset += taken
            }
            turn = (turn + 1) % drivers.count
            next += UInt64(offset)
        }
    }

    /// One ``UnaryDriver`` per connection, each keeping `depth` calls in flight.
    private func connectHomeRPC(loop: EventLoop, meter: CallMeter) throws -> [any PipelinedDriver] {
        let request = try Self.bytes(fromHex: requestHex)
        let authorization = try Self.authorization(tokenFile: tokenFile)
        var drivers: [any PipelinedDriver] = []
        var failures: [RPCError] = []
        let configuration = try tls.homeRPCConfiguration()
        for _ in 0..<connections {
            try ClientConnection.connect(to: try parsedEndpoint(), on: loop, configuration: configuration) { result in
                switch result {
                case .success(let connection):
                    drivers.append(
                        UnaryDriver(
                            connection: connection,
                            method: method,
                            request: request,
                            depth: depth,
                            authorization: authorization,
                            timeoutMilliseconds: timeoutMs,
                            keys: idempotencyKeys ? IdempotencyKeys(connection: drivers.count) : nil,
                            meter: meter
                        )
                    )
                case .failure(let error): failures.append(error)
                }
                if drivers.count + failures.count == connections { loop.stop() }
            }
        }
        loop.run()
        guard failures.isEmpty else {
            throw ValidationError("\(failures.count) of \(connections) connections failed: \(failures[0])")
        }
        return drivers
    }

    /// One ``RedisDriver`` per connection: the same pipelining, over RESP.
    private func connectRedis(loop: EventLoop, meter: CallMeter) throws -> [any PipelinedDriver] {
        let command: [UInt8]
        switch redisCommand.uppercased() {
        case "GET": command = RESPReader.command(["GET", RedisDriver.key])
        case "SET": command = RESPReader.command(["SET", RedisDriver.key, "50"])
        default: throw ValidationError("--redis-command must be GET or SET")
        }
        var drivers: [any PipelinedDriver] = []
        var failures: [UVError] = []
        let context = try tls.context(offering: [])
        for _ in 0..<connections {
            try TLSClientOptions.connect(to: try parsedEndpoint(), on: loop, tls: context) { result in
                switch result {
                case .success(let connection):
                    drivers.append(RedisDriver(connection: connection, command: command, depth: depth, meter: meter))
                case .failure(let error): failures.append(error)
                }
                if drivers.count + failures.count == connections { loop.stop() }
            }
        }
        loop.run()
        guard failures.isEmpty else {
            throw ValidationError("\(failures.count) of \(connections) connections failed: \(failures[0])")
        }
        return drivers
    }

    private func report(_ meter: CallMeter) {
        let seconds = meter.measuredSeconds
        let rate = Double(meter.completed) / seconds
        let histogram = meter.latency
        let what = target == .redis ? redisCommand.uppercased() : method
        if json {
            let fields: [(String, String)] = [
                ("target", "\"\(target.rawValue)\""), ("connections", "\(connections)"), ("depth", "\(depth)"),
                ("seconds", String(format: "%.3f", seconds)), ("calls", "\(meter.completed)"),
                ("errors", "\(meter.errors)"), ("calls_per_second", String(format: "%.0f", rate)),
                ("p50_us", "\(histogram.valueAtPercentile(50))"), ("p90_us", "\(histogram.valueAtPercentile(90))"),
                ("p99_us", "\(histogram.valueAtPercentile(99))"), ("max_us", "\(histogram.max)"),
            ]
            print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            print("\(connections) connections × depth \(depth), \(what), \(String(format: "%.1f", seconds)) s")
            print("calls: \(meter.completed)  errors: \(meter.errors)  calls/s: \(String(format: "%.0f", rate))")
            print(
                "latency µs: p50 \(histogram.valueAtPercentile(50))  p90 \(histogram.valueAtPercentile(90))  "
                    + "p99 \(histogram.valueAtPercentile(99))  p99.9 \(histogram.valueAtPercentile(99.9))  max \(histogram.max)"
            )
        }
    }

    /// The `authorization: Bearer` metadata of the token in `tokenFile`, or none without one.
    static func authorization(tokenFile: String?) throws -> [MetadataEntry] {
        guard let tokenFile else { return [] }
        guard let token = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
            throw ValidationError("cannot read --token-file \(tokenFile)")
        }
        let bearer = "Bearer " + token.trimmingCharacters(in: .whitespacesAndNewlines)
        return [MetadataEntry(key: "authorization", value: Array(bearer.utf8))]
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

/// Keeps one connection's pipeline of unary calls full.
final class UnaryDriver: PipelinedDriver {
    let connection: ClientConnection
    let method: String
    let request: [UInt8]
    let depth: Int
    let meter: CallMeter
    private var isStopping = false
    /// Sent with the connection's first call only: it authenticates the connection.
    private var authorization: [MetadataEntry]
    let timeoutMilliseconds: UInt32
    /// A fresh idempotency key for each call, when the load sends them.
    private var keys: IdempotencyKeys?

    init(
        connection: ClientConnection,
        method: String,
        request: [UInt8],
        depth: Int,
        authorization: [MetadataEntry],
        timeoutMilliseconds: UInt32,
        keys: IdempotencyKeys?,
        meter: CallMeter
    ) {
        self.connection = connection
        self.method = method
        self.request = request
        self.depth = depth
        self.authorization = authorization
        self.timeoutMilliseconds = timeoutMilliseconds
        self.keys = keys
        self.meter = meter
    }

    func fill() {
        connection.batch {
            for _ in 0..<depth { call() }
        }
    }

    func stop() {
        isStopping = true
        connection.close()
    }

    private var inFlight = 0

    var room: Int { isStopping || !connection.isOpen ? 0 : depth - inFlight }

    func send(intendedAt starts: ArraySlice<ContinuousClock.Instant>) {
        connection.batch {
            for start in starts { call(startingAt: start, again: false) }
        }
    }

    /// Starts a call; closed loop (`again`) starts the next one as it completes.
    private func call(startingAt start: ContinuousClock.Instant = .now, again: Bool = true) {
        guard !isStopping, connection.isOpen else { return }
        var metadata = authorization
        authorization = []
        if keys != nil { metadata.append(MetadataEntry(key: "idempotency-key", value: keys!.next())) }
        inFlight += 1
        connection.unary(
            method,
            request: request,
            timeoutMilliseconds: timeoutMilliseconds,
            metadata: metadata
        ) { [unowned self] result in
            inFlight -= 1
            if case .failure = result { meter.record(since: start, failed: true) } else { meter.record(since: start) }
            if again { call() }
        }
    }
}

/// Idempotency keys as the SDK makes them (a UUID's 36 characters), each used once: a connection's
/// number and a count in the UUID's layout, so that a key costs the client no random bytes.
struct IdempotencyKeys {
    private var prefix: [UInt8]
    private var count: UInt64 = 0

    init(connection: Int) {
        // "xxxxxxxx-xxxx-4xxx-8xxx-" from the process and the connection, then 12 digits of count.
        let process = UInt32(truncatingIfNeeded: getpid())
        let text = Self.hex(UInt64(process), digits: 8) + "-" + Self.hex(UInt64(connection), digits: 4) + "-4000-8000-"
        prefix = Array(text.utf8)
    }

    mutating func next() -> [UInt8] {
        count += 1
        var key = prefix
        key.reserveCapacity(36)
        var digits = count
        var tail = [UInt8](repeating: UInt8(ascii: "0"), count: 12)
        var index = 11
        while digits > 0 && index >= 0 {
            tail[index] = Self.digit(UInt8(digits & 0xF))
            digits >>= 4
            index -= 1
        }
        key += tail
        return key
    }

    private static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + String(text.suffix(digits))
    }
}
