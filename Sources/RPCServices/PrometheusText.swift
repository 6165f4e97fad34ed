public import RPCServer

/// Writes Prometheus's text exposition format (version 0.0.4): each metric family's `# HELP` and
/// `# TYPE` once, then its samples. Our own writer rather than swift-prometheus's registry: the
/// counts already live in the server's metrics (kept on the loop for `ServerInfo/Get`), and a
/// histogram is exported from the power-of-two buckets it already has, which that library's
/// histograms cannot be set from; a scrape renders them, and a call pays nothing more.
public struct PrometheusText {
    public private(set) var text = ""

    public init() {}

    public mutating func counter(_ name: String, _ help: String, _ value: UInt64) {
        family(name, "counter", help)
        sample(name, [:], "\(value)")
    }

    public mutating func counter(_ name: String, _ help: String, _ value: Double) {
        family(name, "counter", help)
        sample(name, [:], Self.number(value))
    }

    /// A counter family with one sample per label set.
    public mutating func counter(_ name: String, _ help: String, samples: [(labels: [(String, String)], value: UInt64)])
    {
        family(name, "counter", help)
        for sample in samples { self.sample(name, sample.labels, "\(sample.value)") }
    }

    public mutating func gauge(_ name: String, _ help: String, _ value: Double) {
        family(name, "gauge", help)
        sample(name, [:], Self.number(value))
    }

    public mutating func gauge(_ name: String, _ help: String, _ value: UInt64) {
        gauge(name, help, Double(value))
    }

    /// What a power-of-two histogram counts: microseconds, exported in seconds, or whole numbers.
    public enum HistogramUnit {
        case seconds
        case count
    }

    /// A histogram family from power-of-two buckets, one series per label set (every series lists
    /// the same bounds, so series of several servers sum). Bucket `i` holds values under 2^i: in
    /// seconds its bound is 2^i µs; for whole numbers, 2^i - 1.
    public mutating func histogram(
        _ name: String,
        _ help: String,
        unit: HistogramUnit = .seconds,
        series: [(labels: [(String, String)], histogram: LatencyHistogram)]
    ) {
        family(name, "histogram", help)
        for (labels, histogram) in series {
            var cumulative: UInt64 = 0
            // The last bucket is unbounded.
            for index in 0..<(LatencyHistogram.bucketCount - 1) {
                cumulative += histogram.buckets[index]
                let bound =
                    switch unit {
                    case .seconds: Self.number(Double(UInt64(1) << index) / 1_000_000)
                    case .count: "\((UInt64(1) << index) - 1)"
                    }
                sample(name + "_bucket", labels + [("le", bound)], "\(cumulative)")
            }
            sample(name + "_bucket", labels + [("le", "+Inf")], "\(histogram.count)")
            let sum = Double(histogram.totalMicroseconds) / (unit == .seconds ? 1_000_000 : 1)
            sample(name + "_sum", labels, Self.number(sum))
            sample(name + "_count", labels, "\(histogram.count)")
        }
    }

    private mutating func family(_ name: String, _ type: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    private mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " \(value)\n"
    }

    private mutating func sample(_ name: String, _ labels: [String: String], _ value: String) {
        sample(name, labels.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, value)
    }

    /// A label value with `\`, `"` and newlines escaped, as the format requires.
    static func escaped(_ value: String) -> String {
        var result = ""
        for character in value {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }

    /// A sample value: integers without a fraction, others in Swift's shortest exact form.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}
