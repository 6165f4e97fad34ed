import ArgumentParser
import Foundation
import Histogram
import RPCClient
import TLS
import TLSOptions
import UV
import Wire

/// New connections per second: each of `concurrency` slots connects (with its TLS handshake when
/// asked for), makes one call, closes, and starts again. Against homed (one unary call, with its
/// token) or Redis (one command), on one loop thread, the same way for both.
struct ConnectLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "New connections per second, one call each (TLS handshakes when --tls); prints connections/s."
    )

    @Option(help: "homerpc or redis.")
    var target: UnaryLoad.Target = .homerpc

    @Option(help: "Server address: HOST:PORT or unix:PATH.")
    var endpoint = "127.0.0.1:7420"

    @Option(help: "Connections being made at once.")
    var concurrency = 16

    @Option(help: "Seconds to measure.")
    var duration = 5.0

    @Option(help: "Seconds to run before measuring.")
    var warmup = 1.0

    @Option(help: "homerpc: the method each connection calls once.")
    var method = "grpc.health.v1.Health/Check"

    @Option(help: "homerpc: the request payload as hex (default: an empty message).")
    var requestHex = ""

    @Option(help: "homerpc: file with the bearer token the call carries.")
    var tokenFile: String?

    @Option(help: "redis: GET or PING.")
    var redisCommand = "GET"

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @OptionGroup(title: "TLS")
    var tls: TLSClientOptions

    func validate() throws {
        guard concurrency > 0, duration > 0, warmup >= 0 else {
            throw ValidationError("--concurrency and --duration must be positive")
        }
        guard Endpoint(parsing: endpoint) != nil else {
            throw ValidationError("--endpoint must be HOST:PORT or unix:PATH")
        }
    }

    func run() throws {
        let loop = try EventLoop()
        let meter = CallMeter()
        let slot = try makeSlot(loop: loop, meter: meter)
        var failure: String?
        let phases = LoopTimer(loop: loop)
        for _ in 0..<concurrency { slot { failure = failure ?? $0 } }
        phases.start(after: .milliseconds(Int(warmup * 1000))) {
            meter.startMeasuring()
            phases.start(after: .milliseconds(Int(duration * 1000))) {
                meter.stopMeasuring()
                loop.stop()
            }
        }
        loop.run()
        phases.close()
        if let failure { FileHandle.standardError.write(Data("first failure: \(failure)\n".utf8)) }
        report(meter)
    }

    /// A function that runs one connection's life and starts the next when it ends, telling `failed`
    /// why a connection failed.
    private func makeSlot(loop: EventLoop, meter: CallMeter) throws -> (@escaping (String) -> Void) -> Void {
        let life = try makeLife(loop: loop)
        func cycle(_ failed: @escaping (String) -> Void) {
            let start = ContinuousClock.now
            do {
                try life { problem in
                    if let problem { failed(problem) }
                    meter.record(since: start, failed: problem != nil)
                    cycle(failed)
                }
            } catch {
                failed("\(error)")
            }
        }
        return cycle
    }

    /// One connection's life: connect, one call, close; then `finished` with what went wrong, if
    /// anything.
    private func makeLife(loop: EventLoop) throws -> (@escaping (String?) -> Void) throws -> Void {
        let endpoint = Endpoint(parsing: endpoint)!
        switch target {
        case .homerpc:
            let configuration = try tls.homeRPCConfiguration()
            let request = try UnaryLoad.bytes(fromHex: requestHex)
            let metadata = try UnaryLoad.authorization(tokenFile: tokenFile)
            let method = self.method
            return { finished in
                try ClientConnection.connect(to: endpoint, on: loop, configuration: configuration) { result in
                    switch result {
                    case .success(let connection):
                        _ = connection.unary(method, request: request, metadata: metadata) { answer in
                            connection.close()
                            if case .failure(let error) = answer { finished("\(error)") } else { finished(nil) }
                        }
                    case .failure(let error):
                        finished("\(error)")
                    }
                }
            }
        case .redis:
            let context = try tls.context(offering: [])
            let command: [UInt8]
            switch redisCommand.uppercased() {
            case "GET": command = RESPReader.command(["GET", RedisDriver.key])
            case "PING": command = RESPReader.command(["PING"])
            default: throw ValidationError("--redis-command must be GET or PING")
            }
            return { finished in
                try TLSClientOptions.connect(to: endpoint, on: loop, tls: context) { result in
                    switch result {
                    case .success(let connection):
                        connection.delegate = OneCommand { succeeded in
                            finished(succeeded ? nil : "no reply from Redis")
                        }
                        do {
                            try connection.startReading()
                            try connection.write(command)
                        } catch {
                            connection.close()
                        }
                    case .failure(let error):
                        finished("\(error)")
                    }
                }
            }
        }
    }

    private func report(_ meter: CallMeter) {
        let rate = Double(meter.completed) / meter.measuredSeconds
        let histogram = meter.latency
        if json {
            print(
                "{\"target\": \"\(target.rawValue)\", \"concurrency\": \(concurrency), \"tls\": \(tls.isEnabled), "
                    + "\"connections\": \(meter.completed), \"errors\": \(meter.errors), "
                    + "\"connections_per_second\": \(String(format: "%.0f", rate)), "
                    + "\"p50_us\": \(histogram.valueAtPercentile(50)), \"p99_us\": \(histogram.valueAtPercentile(99))}"
            )
        } else {
            print(
                "\(concurrency) at once, \(tls.isEnabled ? "TLS" : "plain"), \(String(format: "%.1f", meter.measuredSeconds)) s"
            )
            print(
                "connections: \(meter.completed)  errors: \(meter.errors)  connections/s: \(String(format: "%.0f", rate))"
            )
            print("connect + call µs: p50 \(histogram.valueAtPercentile(50))  p99 \(histogram.valueAtPercentile(99))")
        }
    }
}

/// One Redis command's connection: the first complete reply (or a close) ends it.
private final class OneCommand: ConnectionDelegate {
    private var reader = RESPReader()
    private var finished: ((Bool) -> Void)?

    init(finished: @escaping (Bool) -> Void) {
        self.finished = finished
    }

    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        reader.append(bytes)
        guard (try? reader.next()) != nil else { return }
        connection.close()
        finish(true)
    }

    func connectionDidClose(_ connection: Connection, error: UVError?) {
        finish(false)
    }

    private func finish(_ succeeded: Bool) {
        let finished = self.finished
        self.finished = nil
        finished?(succeeded)
    }
}
