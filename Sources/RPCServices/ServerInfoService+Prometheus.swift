import RPCServer
import UV
import Wire

extension ServerInfoService {
    /// The server's metrics in Prometheus's text exposition format, rendered now from the same
    /// counters `Get` reports (``MetricsEndpoint`` serves them). docs/OPERATIONS.md lists them.
    public func prometheusText() -> [UInt8] {
        var out = PrometheusText()
        guard let server else { return [] }
        let metrics = server.metrics
        let methods = metrics.methods.sorted { $0.key < $1.key }
        out.counter(
            "homed_calls_total",
            "Calls ended, by method and status code.",
            samples: methods.flatMap { name, stats in
                stats.callsByStatus.sorted { $0.key < $1.key }.map { code, calls in
                    ([("method", name), ("code", Self.statusName(code))], calls)
                }
            }
        )
        out.histogram(
            "homed_call_duration_seconds",
            "Time from a call's start to its end, by method.",
            series: methods.map { ([("method", $0.key)], $0.value.latency) }
        )
        out.counter(
            "homed_calls_refused_total",
            "Calls refused before any handler (unknown method, unauthenticated, limits, drain), by status code.",
            samples: metrics.refusedByStatus.sorted { $0.key < $1.key }.map {
                ([("code", Self.statusName($0.key))], $0.value)
            }
        )
        out.gauge("homed_calls_open", "Calls in progress, change streams included.", UInt64(server.openCallCount))
        out.gauge("homed_connections_open", "Open client connections.", UInt64(server.connectionCount))
        out.counter("homed_connections_accepted_total", "Connections accepted.", metrics.connectionsAccepted)
        out.counter(
            "homed_connections_rejected_total",
            "Connections refused at accept (over the connection limit).",
            metrics.connectionsRejected
        )
        out.counter(
            "homed_connections_closed_total",
            "Connections closed, by reason.",
            samples: metrics.connectionsClosedByReason.sorted { $0.key < $1.key }.map {
                ([("reason", $0.key)], $0.value)
            }
        )
        out.counter("homed_tls_handshakes_total", "TLS handshakes completed.", metrics.tlsHandshakes)
        out.counter(
            "homed_tls_failures_total",
            "TLS sessions that failed: a refused handshake, a bad record, a close before the handshake ended.",
            metrics.tlsFailures
        )
        out.gauge(
            "homed_buffered_bytes",
            "Bytes held for all connections, unsent or unread.",
            UInt64(max(0, server.bufferedByteCount))
        )
        out.gauge(
            "homed_buffered_bytes_limit",
            "The budget for buffered bytes (--max-buffered-bytes).",
            UInt64(server.configuration.maxBufferedBytes)
        )
        if let commits {
            out.counter("homed_commits_total", "Store commits (each a group of changes).", commits.count)
            out.counter("homed_commit_changes_total", "Row changes committed.", commits.changes)
            out.histogram(
                "homed_commit_duration_seconds",
                "A commit's time on the writer thread, statements and COMMIT.",
                series: [([], commits.durations)]
            )
            out.histogram(
                "homed_commit_fsync_duration_seconds",
                "COMMIT alone: the WAL's fsync.",
                series: [([], commits.fsyncDurations)]
            )
            out.histogram(
                "homed_commit_group_size",
                "Row changes per commit.",
                unit: .count,
                series: [([], commits.groupSizes)]
            )
        }
        if let lag {
            out.histogram(
                "homed_loop_lag_seconds",
                "How late the event loop ran a timer due every 250 ms.",
                series: [([], lag.lateness)]
            )
            out.counter(
                "homed_loop_stalls_total",
                "Loop lag samples of 50 ms or more: the loop was held by a long callback.",
                lag.stalls
            )
        }
        addMetrics?(&out)
        let usage = ProcessUsage.current
        out.gauge("process_resident_memory_bytes", "Resident memory.", usage.residentBytes)
        out.counter(
            "process_cpu_seconds_total",
            "CPU time, user and system, in seconds.",
            Double(usage.userMilliseconds + usage.systemMilliseconds) / 1000
        )
        return Array(out.text.utf8)
    }

    private static func statusName(_ code: UInt16) -> String {
        StatusCode(rawValue: code).name
    }
}
