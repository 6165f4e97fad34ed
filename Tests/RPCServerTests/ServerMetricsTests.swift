import Testing
import Wire

@testable import RPCServer

/// The per-method counters, kept in one array: each method's calls, statuses and latencies stay its
/// own, and a code beyond the defined ones is counted too.
@Suite struct ServerMetricsTests {
    @Test func eachMethodKeepsItsOwnCountsStatusesAndLatencies() {
        let metrics = ServerMetrics(methodNames: ["a/First", "a/Second", "a/Never"])
        metrics.recordCalls(methodIndex: 0, code: .ok, nanoseconds: 3_000, calls: 5)
        metrics.recordCalls(methodIndex: 0, code: .notFound, nanoseconds: 900_000)
        metrics.recordCalls(methodIndex: 1, code: StatusCode(rawValue: 99), nanoseconds: 0, calls: 2)
        metrics.recordCalls(methodIndex: 1, code: .unavailable, nanoseconds: 40_000_000)

        #expect(Set(metrics.methods.keys) == ["a/First", "a/Second"])
        #expect(metrics.callsTotal == 9)
        let first = metrics.methods["a/First"]!
        #expect(first.calls == 6 && first.errors == 1)
        #expect(first.callsByStatus == [StatusCode.ok.rawValue: 5, StatusCode.notFound.rawValue: 1])
        #expect(first.latency.count == 6 && first.latency.totalMicroseconds == 5 * 3 + 900)
        // 3 µs falls in [2, 4), 900 µs in [512, 1024).
        #expect(first.latency.percentile(0.5) == 4 && first.latency.percentile(1) == 1_024)
        let second = metrics.methods["a/Second"]!
        #expect(second.calls == 3 && second.errors == 3)
        #expect(second.callsByStatus == [99: 2, StatusCode.unavailable.rawValue: 1])
        #expect(second.latency.count == 3 && second.latency.percentile(0.5) == 1)
        #expect(second.latency.percentile(1) == 65_536)
    }
}
