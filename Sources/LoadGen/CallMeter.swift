import Histogram
import UV

/// The calls completed while measuring, with their latency: shared by every pipelined driver.
final class CallMeter {
    private(set) var latency = Histogram<UInt64>(
        highestTrackableValue: 60_000_000,
        numberOfSignificantValueDigits: .three
    )
    private(set) var completed = 0
    /// Every call that completed, measured or not (for a timeline that includes warm-ups).
    private(set) var total = 0
    /// Calls started while measuring (an open-loop producer's offered count).
    private(set) var started = 0
    private(set) var errors = 0
    private(set) var isMeasuring = false
    private var measureStart = ContinuousClock.now
    private var measureEnd = ContinuousClock.now
    /// Runs once when this many calls have completed (a run of a fixed number of calls).
    var limit: (calls: Int, reached: () -> Void)?

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

    /// An open-loop producer started a call.
    func start() {
        if isMeasuring { started += 1 }
    }

    /// A failure that has no latency (a stream that ended, a reply that could not be read).
    func failed() {
        if isMeasuring { errors += 1 }
    }

    /// A call that started at `start` completed now.
    func record(since start: ContinuousClock.Instant, failed: Bool = false) {
        if !failed { total += 1 }
        guard isMeasuring else { return }
        _ = latency.record(start.duration(to: .now).wholeMicroseconds)
        if failed { errors += 1 } else { completed += 1 }
        if let limit, completed + errors >= limit.calls {
            self.limit = nil
            limit.reached()
        }
    }
}

/// Open-loop pacing: how many requests are due by now at `rate` per second from the start, and
/// when each was due.
struct OpenLoopSchedule {
    let rate: Double
    let start = ContinuousClock.now

    /// How many are due by now (the first is due at the start).
    var dueCount: UInt64 {
        let elapsed = start.duration(to: .now).components
        return UInt64((Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18) * rate) + 1
    }

    /// When request `index` (from 0) was due.
    func intendedStart(of index: UInt64) -> ContinuousClock.Instant {
        start.advanced(by: .seconds(Double(index) / rate))
    }
}

/// Keeps one connection's pipeline full: `depth` requests in flight, a new one as each completes.
protocol PipelinedDriver: AnyObject {
    /// Sends the first `depth` requests (closed loop: each answer sends the next).
    func fill()
    /// How many more requests may be in flight now (open loop).
    var room: Int { get }
    /// Open loop: sends one request for each intended start (at most ``room``) in one write; their
    /// latency counts from those instants.
    func send(intendedAt starts: ArraySlice<ContinuousClock.Instant>)
    /// Sends nothing more and closes the connection.
    func stop()
}

/// The Redis side of `loadgen unary`: one connection pipelining one command.
final class RedisDriver: PipelinedDriver, ConnectionDelegate {
    static let key = "homerpc:loadgen"

    let connection: Connection
    let command: [UInt8]
    let depth: Int
    let meter: CallMeter
    private var reader = RESPReader()
    /// When each request in flight was sent (or meant to be), oldest first (Redis answers in order).
    private var sentAt: [ContinuousClock.Instant] = []
    private var oldest = 0
    private var isStopping = false
    /// Whether each answer sends the next request.
    private var isClosedLoop = false

    init(connection: Connection, command: [UInt8], depth: Int, meter: CallMeter) {
        self.connection = connection
        self.command = command
        self.depth = depth
        self.meter = meter
        connection.delegate = self
        try? connection.startReading()
    }

    var room: Int { isStopping ? 0 : depth - (sentAt.count - oldest) }

    func send(intendedAt starts: ArraySlice<ContinuousClock.Instant>) {
        guard !starts.isEmpty else { return }
        var batch: [UInt8] = []
        batch.reserveCapacity(command.count * starts.count)
        for start in starts {
            batch += command
            sentAt.append(start)
        }
        try? connection.write(batch)
    }

    func fill() {
        isClosedLoop = true
        var batch: [UInt8] = []
        for _ in 0..<depth {
            batch += command
            sentAt.append(.now)
        }
        try? connection.write(batch)
    }

    func stop() {
        isStopping = true
        connection.close()
    }

    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        reader.append(bytes)
        var next: [UInt8] = []
        do {
            while let reply = try reader.next() {
                guard oldest < sentAt.count else { break }
                if case .error = reply {
                    meter.record(since: sentAt[oldest], failed: true)
                } else {
                    meter.record(since: sentAt[oldest])
                }
                oldest += 1
                if !isStopping && isClosedLoop {
                    next += command
                    sentAt.append(.now)
                }
            }
        } catch {
            connection.close()
            return
        }
        if oldest > 4096 {
            sentAt.removeFirst(oldest)
            oldest = 0
        }
        if !next.isEmpty { try? connection.write(next) }
    }

    func connectionDidClose(_ connection: Connection, error: UVError?) {}
}
