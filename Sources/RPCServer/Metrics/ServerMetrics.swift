import UV
import Wire

/// Counters and latency histograms of an ``RPCServer``, kept on the loop thread and read through the
/// server info call.
public final class ServerMetrics {
    /// What one method has seen.
    public struct MethodStats: Hashable, Sendable {
        public var calls: UInt64 = 0
        /// Ended calls for each defined status code (0...16), by code number.
        fileprivate var definedStatusCounts = [UInt64](repeating: 0, count: Slots.definedStatuses)
        /// Ended calls with codes beyond the defined ones.
        fileprivate var otherStatusCounts: [UInt16: UInt64] = [:]
        public var latency = LatencyHistogram()

        /// Ended calls by status code number (codes with no calls are left out).
        public var callsByStatus: [UInt16: UInt64] {
            var counts = otherStatusCounts
            for (code, count) in definedStatusCounts.enumerated() where count > 0 { counts[UInt16(code)] = count }
            return counts
        }

        /// Calls that ended with a status other than OK.
        public var errors: UInt64 { calls - definedStatusCounts[Int(StatusCode.ok.rawValue)] }
    }

    /// Every method's counters in one array, ``Slots/width`` of them a method at its registry index:
    /// recording a call adds into one buffer. (Kept as an array of ``MethodStats``, each holding two
    /// arrays, a record checked three buffers' uniqueness: 150 instructions, as much as a clock read
    /// and more than the rest of a call's metrics.)
    private var counters: [UInt64]
    /// Calls that ended with codes beyond the defined ones, by method index (rare).
    private var otherStatusCounts: [Int: [UInt16: UInt64]] = [:]
    private let methodNames: [String]

    /// Where a method's counters lie in its ``counters`` slots. Literals, not derived from
    /// `StatusCode.allDefined` (a lazily made global, checked on every use).
    private enum Slots {
        static let definedStatuses = 17
        static let calls = 0
        static let statusCounts = 1
        static let latencyBuckets = statusCounts + definedStatuses
        static let latencyCount = latencyBuckets + LatencyHistogram.bucketCount
        static let latencyTotal = latencyCount + 1
        static let width = latencyTotal + 1
    }

    /// Stats of every method that has been called, by full method name.
    public var methods: [String: MethodStats] {
        var result: [String: MethodStats] = [:]
        for (index, name) in methodNames.enumerated() where counters[index * Slots.width + Slots.calls] > 0 {
            result[name] = stats(ofMethodAt: index)
        }
        return result
    }

    private func stats(ofMethodAt index: Int) -> MethodStats {
        let slots = counters[(index * Slots.width)..<((index + 1) * Slots.width)]
        let start = slots.startIndex
        var stats = MethodStats()
        stats.calls = slots[start + Slots.calls]
        stats.definedStatusCounts = Array(slots[(start + Slots.statusCounts)..<(start + Slots.latencyBuckets)])
        stats.otherStatusCounts = otherStatusCounts[index] ?? [:]
        stats.latency = LatencyHistogram(
            buckets: Array(slots[(start + Slots.latencyBuckets)..<(start + Slots.latencyCount)]),
            count: slots[start + Slots.latencyCount],
            totalMicroseconds: slots[start + Slots.latencyTotal]
        )
        return stats
    }

    /// Calls refused before reaching a handler (unknown method, unauthenticated, limits, drain), by code.
    public private(set) var refusedByStatus: [UInt16: UInt64] = [:]
    public private(set) var connectionsAccepted: UInt64 = 0
    public private(set) var connectionsRejected: UInt64 = 0
    /// Closed connections by close reason (its description's first words).
    public private(set) var connectionsClosedByReason: [String: UInt64] = [:]
    public let startedAt = ContinuousClock.now

    init(methodNames: [String]) {
        precondition(Slots.definedStatuses == StatusCode.allDefined.count, "a slot for each defined status")
        self.methodNames = methodNames
        counters = Array(repeating: 0, count: methodNames.count * Slots.width)
    }

    public var callsTotal: UInt64 {
        (0..<methodNames.count).reduce(0) { $0 + counters[$1 * Slots.width + Slots.calls] }
    }

    /// Records a call's end and its latency.
    /// - Parameter startedAt: ``EventLoop/monotonicNanoseconds`` when the call started.
    func recordCall(methodIndex: Int, code: StatusCode, startedAt: UInt64) {
        recordCalls(methodIndex: methodIndex, code: code, nanoseconds: EventLoop.monotonicNanoseconds &- startedAt)
    }

    /// Records the end of `calls` calls of one method, with one status, that took the same time.
    func recordCalls(methodIndex: Int, code: StatusCode, nanoseconds: UInt64, calls: UInt64 = 1) {
        let microseconds = nanoseconds / 1000
        let status = Int(code.rawValue)
        if status >= Slots.definedStatuses {
            otherStatusCounts[methodIndex, default: [:]][code.rawValue, default: 0] += calls
        }
        Self.add(calls, status, microseconds, at: methodIndex * Slots.width, to: &counters)
    }

    /// Adds to a method's counts through one span of the array: each subscript of the array on its
    /// own checked its buffer's uniqueness again.
    private static func add(
        _ calls: UInt64,
        _ status: Int,
        _ microseconds: UInt64,
        at base: Int,
        to counters: inout [UInt64]
    ) {
        var slots = counters.mutableSpan
        slots[base + Slots.calls] &+= calls
        if status < Slots.definedStatuses { slots[base + Slots.statusCounts + status] &+= calls }
        slots[base + Slots.latencyBuckets + LatencyHistogram.bucket(ofMicroseconds: microseconds)] &+= calls
        slots[base + Slots.latencyCount] &+= calls
        slots[base + Slots.latencyTotal] &+= microseconds &* calls
    }

    func recordRefusal(_ code: StatusCode) {
        refusedByStatus[code.rawValue, default: 0] += 1
    }

    /// TLS handshakes completed, and TLS sessions that failed (a refused handshake, a bad record).
    public private(set) var tlsHandshakes: UInt64 = 0
    public private(set) var tlsFailures: UInt64 = 0

    func tlsHandshakeCompleted() { tlsHandshakes += 1 }
    func tlsFailed() { tlsFailures += 1 }

    func connectionAccepted() { connectionsAccepted += 1 }
    func connectionRejected() { connectionsRejected += 1 }

    func connectionClosed(_ reason: CloseReason) {
        connectionsClosedByReason[reason.metricName, default: 0] += 1
    }
}

extension CloseReason {
    /// A stable, low-cardinality label for metrics.
    var metricName: String {
        switch self {
        case .protocolError: "protocol_error"
        case .protocolViolation: "protocol_violation"
        case .handshakeTimeout: "handshake_timeout"
        case .keepaliveTimeout: "keepalive_timeout"
        case .idleTimeout: "idle_timeout"
        case .drained: "drained"
        case .tooManyConnections: "too_many_connections"
        case .outboundBufferFull: "outbound_buffer_full"
        case .bufferBudgetExceeded: "buffer_budget_exceeded"
        case .peerClosed: "peer_closed"
        }
    }
}
