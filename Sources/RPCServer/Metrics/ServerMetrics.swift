import Wire

/// Counters and latency histograms of an ``RPCServer``, kept on the loop thread and read through the
/// server info call.
public final class ServerMetrics {
    /// What one method has seen.
    public struct MethodStats: Hashable, Sendable {
        public var calls: UInt64 = 0
        /// Ended calls by status code number.
        public var callsByStatus: [UInt16: UInt64] = [:]
        public var latency = LatencyHistogram()

        /// Calls that ended with a status other than OK.
        public var errors: UInt64 { calls - (callsByStatus[StatusCode.ok.rawValue] ?? 0) }
    }

    public private(set) var methods: [String: MethodStats] = [:]
    /// Calls refused before reaching a handler (unknown method, unauthenticated, limits, drain), by code.
    public private(set) var refusedByStatus: [UInt16: UInt64] = [:]
    public private(set) var connectionsAccepted: UInt64 = 0
    public private(set) var connectionsRejected: UInt64 = 0
    /// Closed connections by close reason (its description's first words).
    public private(set) var connectionsClosedByReason: [String: UInt64] = [:]
    public let startedAt = ContinuousClock.now

    init() {}

    public var callsTotal: UInt64 { methods.values.reduce(0) { $0 + $1.calls } }

    func recordCall(method: String, code: StatusCode, startedAt: ContinuousClock.Instant) {
        let elapsed = startedAt.duration(to: .now).components
        let microseconds =
            UInt64(max(0, elapsed.seconds)) * 1_000_000 + UInt64(max(0, elapsed.attoseconds) / 1_000_000_000_000)
        methods[method, default: MethodStats()].calls += 1
        methods[method]!.callsByStatus[code.rawValue, default: 0] += 1
        methods[method]!.latency.record(microseconds: microseconds)
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
        case .peerClosed: "peer_closed"
        }
    }
}
