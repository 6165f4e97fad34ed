import RPCServer
import Testing

@testable import RPCServices

/// The metrics port's pieces: Prometheus's text format as written, and request heads as read.
@Suite struct PrometheusTextTests {
    @Test func aHistogramIsCumulativeInSecondsWithTheSameBoundsForEverySeries() {
        var latency = LatencyHistogram()
        latency.record(microseconds: 0)
        latency.record(microseconds: 3)
        latency.record(microseconds: 3)
        latency.record(microseconds: 1_500)
        var out = PrometheusText()
        out.histogram(
            "t_seconds",
            "Help.",
            series: [([("method", "a\"b\\c\nd")], latency), ([("method", "e")], LatencyHistogram())]
        )
        let lines = out.text.split(separator: "\n").map(String.init)
        #expect(lines[0] == "# HELP t_seconds Help." && lines[1] == "# TYPE t_seconds histogram")
        let label = #"method="a\"b\\c\nd""#
        #expect(lines.contains("t_seconds_bucket{\(label),le=\"1e-06\"} 1"))
        #expect(lines.contains("t_seconds_bucket{\(label),le=\"4e-06\"} 3"))
        #expect(lines.contains("t_seconds_bucket{\(label),le=\"0.001024\"} 3"))
        #expect(lines.contains("t_seconds_bucket{\(label),le=\"0.002048\"} 4"))
        #expect(lines.contains("t_seconds_bucket{\(label),le=\"+Inf\"} 4"))
        #expect(lines.contains("t_seconds_sum{\(label)} 0.001506"))
        #expect(lines.contains("t_seconds_count{\(label)} 4"))
        // Every series lists every bound, so series of several servers sum.
        let bounds = { (method: String) in lines.filter { $0.hasPrefix("t_seconds_bucket{method=\"\(method)") }.count }
        #expect(bounds("a") == LatencyHistogram.bucketCount && bounds("e") == LatencyHistogram.bucketCount)
    }

    @Test func countsHaveWholeNumberBounds() {
        var sizes = LatencyHistogram()
        sizes.record(microseconds: 2)
        var out = PrometheusText()
        out.histogram("g", "Sizes.", unit: .count, series: [([], sizes)])
        #expect(out.text.contains("g_bucket{le=\"1\"} 0\n") && out.text.contains("g_bucket{le=\"3\"} 1\n"))
        #expect(out.text.contains("g_sum 2\n"))
    }

    @Test func countersAndGaugesAreOneSampleEach() {
        var out = PrometheusText()
        out.counter("c_total", "Calls.", samples: [([("code", "OK")], 3), ([("code", "NOT_FOUND")], 1)])
        out.gauge("g", "Gauge.", 0.5)
        out.counter("s_total", "Seconds.", 12.25)
        #expect(
            out.text
                == "# HELP c_total Calls.\n# TYPE c_total counter\nc_total{code=\"OK\"} 3\nc_total{code=\"NOT_FOUND\"} 1\n"
                + "# HELP g Gauge.\n# TYPE g gauge\ng 0.5\n# HELP s_total Seconds.\n# TYPE s_total counter\ns_total 12.25\n"
        )
    }

    @Test func requestHeadsAreReadWhenCompleteAndRefusedWhenNotHTTP() {
        #expect(HTTPRequestHead.parse(Array("GET /metrics HTTP/1.1\r\nHost: x\r\n".utf8)) == .none)
        #expect(
            HTTPRequestHead.parse(Array("GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                == .some(HTTPRequestHead(method: "GET", path: "/metrics"))
        )
        #expect(
            HTTPRequestHead.parse(Array("POST /m HTTP/1.0\r\n\r\n".utf8))
                == .some(HTTPRequestHead(method: "POST", path: "/m"))
        )
        for bad in [
            "GET /metrics\r\n\r\n", "GET metrics HTTP/1.1\r\n\r\n", "GET /metrics HTTP/2\r\n\r\n",
            " / HTTP/1.1\r\n\r\n",
        ] {
            #expect(HTTPRequestHead.parse(Array(bad.utf8)) == .some(nil), "\(bad)")
        }
        #expect(HTTPRequestHead.parse([0xFF, 0x20, 0x2F, 0x20, 13, 10, 13, 10]) == .some(nil))
    }
}
