import Foundation
public import HomeProto
public import RPCServer
import UV

/// `home.v1.ServerInfo/Get`: version, uptime, connection and call counters, per-method metrics.
public final class ServerInfoService {
    public static let getMethod = "home.v1.ServerInfo/Get"

    public let version: String
    /// Set once the server exists (the registry is built before it).
    public weak var server: RPCServer?
    /// The store's commits, for a server that has a store.
    public var commits: StoreCommitMetrics?
    /// Adds the figures of the services above the runtime (what change streams and the accessory
    /// browser hold).
    public var addFigures: ((inout Home_V1_ServerInfoResponse) -> Void)?
    /// Whether a call may be answered (its caller's token still live, its limits allowing the
    /// method), failing it otherwise: for a server whose accounts' rights can change under an open
    /// connection.
    public var admits: ((ServerCall) -> Bool)?
    /// Adds the metrics of the services above the runtime to a scrape (``prometheusText()``).
    public var addMetrics: ((inout PrometheusText) -> Void)?
    /// The loop's lateness, for a scrape.
    public var lag: LoopLagProbe?

    public init(version: String) {
        self.version = version
    }

    /// Registers the method; the registry's handler keeps this service alive.
    public func register(in registry: inout MethodRegistry) {
        registry.registerUnary(
            Self.getMethod,
            request: Home_V1_ServerInfoRequest.self
        ) { call, _ in
            guard self.admits?(call) ?? true else { return }
            call.respond(with: self.snapshot())
        }
    }

    /// The current figures.
    public func snapshot() -> Home_V1_ServerInfoResponse {
        var info = Home_V1_ServerInfoResponse()
        info.version = version
        guard let server else { return info }
        let metrics = server.metrics
        info.uptimeMs = metrics.startedAt.duration(to: .now).wholeMicroseconds / 1000
        info.connectionsOpen = UInt64(server.connectionCount)
        info.connectionsAccepted = metrics.connectionsAccepted
        info.connectionsRejected = metrics.connectionsRejected
        info.connectionsClosedByReason = metrics.connectionsClosedByReason
        info.callsTotal = metrics.callsTotal
        info.callsOpen = UInt64(server.openCallCount)
        info.tlsHandshakes = metrics.tlsHandshakes
        info.tlsFailures = metrics.tlsFailures
        info.refusedByStatus = Dictionary(
            uniqueKeysWithValues: metrics.refusedByStatus.map { (UInt32($0.key), $0.value) }
        )
        info.draining = server.isShuttingDown
        info.bufferedBytes = UInt64(max(0, server.bufferedByteCount))
        info.bufferedBytesLimit = UInt64(server.configuration.maxBufferedBytes)
        let usage = ProcessUsage.current
        info.residentBytes = usage.residentBytes
        info.cpuUserMs = usage.userMilliseconds
        info.cpuSystemMs = usage.systemMilliseconds
        if let commits {
            info.commits.count = commits.count
            info.commits.changes = commits.changes
            // Bucket bounds (within a factor of two): capped by the longest, which is exact, so that
            // the p99 of a few commits does not read above all of them.
            info.commits.durationP50Us = min(commits.durations.percentile(0.5), commits.longestMicroseconds)
            info.commits.durationP99Us = min(commits.durations.percentile(0.99), commits.longestMicroseconds)
            info.commits.durationMaxUs = commits.longestMicroseconds
            info.commits.slow = commits.slow
        }
        addFigures?(&info)
        info.methods = metrics.methods.keys.sorted().map { name in
            let stats = metrics.methods[name]!
            var method = Home_V1_MethodMetrics()
            method.method = name
            method.calls = stats.calls
            method.errors = stats.errors
            method.callsByStatus = Dictionary(
                uniqueKeysWithValues: stats.callsByStatus.map { (UInt32($0.key), $0.value) }
            )
            method.latencyP50Us = stats.latency.percentile(0.5)
            method.latencyP90Us = stats.latency.percentile(0.9)
            method.latencyP99Us = stats.latency.percentile(0.99)
            method.latencyMeanUs = stats.latency.count == 0 ? 0 : stats.latency.totalMicroseconds / stats.latency.count
            return method
        }
        return info
    }
}
