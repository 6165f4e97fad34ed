import UV
import Wire

/// Counters and latency histograms of an ``RPCServer``, kept on the loop thread and read through the
/// server info call.
public final class ServerMetrics {
    /// What one method has seen.
    public struct MethodStats: Hashable, Sendable {
        public var calls: UInt64 = 0
        /// Ended calls for each defined status code (0...16), by code number.
        private var definedStatusCounts = [UInt64](repeating: 0, count: StatusCode.allDefined.count)
        /// Ended calls with codes beyond the defined ones.
        private var otherStatusCounts: [UInt16: UInt64] = [:]
        public var latency = LatencyHistogram()

        /// Ended calls by status code number (codes with no calls are left out).
        public var callsByStatus: [UInt16: UInt64] {
            var counts = otherStatusCounts
            for (code, count) in definedStatusCounts.enumerated() where count > 0 { counts[UInt16(code)] = count }
            return counts
        }

        /// Calls that ended with a status other than OK.
        public var errors: UInt64 { calls - definedStatusCounts[Int(StatusCode.ok.rawValue)] }

        mutating func record(code: StatusCode, microseconds: UInt64, calls: UInt64) {
            self.calls += calls
            if Int(code.rawValue) < definedStatusCounts.count {
                definedStatusCounts[Int(code.rawValue)] += calls
            } else {
                otherStatusCounts[code.rawValue, default: 0] += calls
            }
            latency.record(microseconds: microseconds, calls: calls)
        }
    }

    /// Per method, by the method's registry index (one array access per call, no string hashing).
    private var statsByIndex: [MethodStats]
    private let methodNames: [String]

    /// Stats of every method that has been called, by full method name.
    public var methods: [String: MethodStats] {
        var result: [String: MethodStats] = [:]
        for (index, stats) in statsByIndex.enumerated() where stats.calls > 0 {
            result[methodNames[index]] = stats
        }
        return result
    }
    /// Calls refused before reaching a handler (unknown method, unauthenticated, limits, drain), by code.
    public private(set) var refusedByStatus: [UInt16: UInt64] = [:]
    public private(set) var connectionsAccepted: UInt64 = 0
    public private(set) var connectionsRejected: UInt64 = 0
    /// Closed connections by close reason (its description's first words).
    public private(set) var connectionsClosedByReason: [String: UInt64] = [:]
    public let startedAt = ContinuousClock.now

    init(methodNames: [String]) {
        self.methodNames = methodNames
        statsByIndex = Array(repeating: MethodStats(), count: methodNames.count)
    }

    public var callsTotal: UInt64 { statsByIndex.reduce(0) { $0 + $1.calls } }

    /// Records a call's end and its latency.
    /// - Parameter startedAt: ``EventLoop/monotonicNanoseconds`` when the call started.
    func recordCall(methodIndex: Int, code: StatusCode, startedAt: UInt64) {
        recordCalls(methodIndex: methodIndex, code: code, nanoseconds: EventLoop.monotonicNanoseconds &- startedAt)
    }

    /// Records the end of `calls` calls of one method, with one status, that took the same time.
    func recordCalls(methodIndex: Int, code: StatusCode, nanoseconds: UInt64, calls: UInt64 = 1) {
        statsByIndex[methodIndex].record(code: code, microseconds: nanoseconds / 1000, calls: calls)
    }

    func recordRefusal(_ code: StatusCode) {
        refusedByStatus[code.rawValue, default: 0] += 1
    }

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
