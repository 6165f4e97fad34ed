import Foundation
import Histogram

/// One step of a rate sweep: what each kind was offered and what it got.
struct SweepStep {
    struct Kind {
        let name: String
        let offered: Double
        let completedPerSecond: Double
        let errors: Int
        /// Started while measuring (the Poisson draw of what was offered).
        let started: Int
        let completed: Int
        let p50: UInt64
        let p99: UInt64
        let p999: UInt64
    }

    let factor: Int
    let kinds: [Kind]
    /// A p99 above this (µs) counts as saturated.
    let p99Limit: UInt64

    init(factor: Int, scenario: FleetScenario, fleet: Fleet, p99Limit: UInt64) {
        self.factor = factor
        self.p99Limit = p99Limit
        let offered = scenario.ratesByKind
        kinds = fleet.meters.map { name, meter in
            Kind(
                name: name,
                offered: (offered[name] ?? 0) * Double(factor),
                completedPerSecond: Double(meter.completed) / max(meter.measuredSeconds, 1e-9),
                errors: meter.errors,
                started: meter.started,
                completed: meter.completed,
                p50: meter.latency.valueAtPercentile(50),
                p99: meter.latency.valueAtPercentile(99),
                p999: meter.latency.valueAtPercentile(99.9)
            )
        }
    }

    /// Saturated: a kind that completed less than 90% of the calls it started while measuring, any
    /// error, or a p99 over the limit. (Calls started, not the nominal rate: at a few per second the
    /// Poisson draw alone strays by more than 10%.)
    var isSaturated: Bool {
        kinds.contains {
            $0.errors > 0 || $0.p99 > p99Limit || Double($0.completed) < 0.9 * Double($0.started)
        }
    }

    static func report(_ steps: [SweepStep], json: Bool, timeline: String) {
        let knee = steps.last { !$0.isSaturated }
        if json {
            let entries = steps.map { step in
                let kinds = step.kinds.map { kind in
                    "\"\(kind.name)\": {\"offered_per_second\": \(kind.offered), \"per_second\": "
                        + "\(String(format: "%.1f", kind.completedPerSecond)), \"errors\": \(kind.errors), "
                        + "\"p50_us\": \(kind.p50), \"p99_us\": \(kind.p99), \"p999_us\": \(kind.p999)}"
                }
                return "{\"factor\": \(step.factor), \"saturated\": \(step.isSaturated), "
                    + kinds.joined(separator: ", ")
                    + "}"
            }
            print(
                "{\"knee_factor\": \(knee.map { "\($0.factor)" } ?? "null"), \"steps\": ["
                    + entries.joined(separator: ", ")
                    + "], \"timeline\": \(timeline)}"
            )
            return
        }
        print("| step | kind | offered/s | completed/s | errors | p50 µs | p99 µs | p99.9 µs |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|")
        for step in steps {
            for kind in step.kinds {
                print(
                    "| ×\(step.factor)\(step.isSaturated ? " (saturated)" : "") | \(kind.name) | "
                        + "\(String(format: "%.0f", kind.offered)) | \(String(format: "%.0f", kind.completedPerSecond)) | "
                        + "\(kind.errors) | \(kind.p50) | \(kind.p99) | \(kind.p999) |"
                )
            }
        }
        if let knee {
            let total = knee.kinds.filter { $0.name != "notification" }.map(\.offered).reduce(0, +)
            print("knee: ×\(knee.factor), \(String(format: "%.0f", total)) operations/s offered in all")
        } else {
            print("knee: none (the first step already saturated)")
        }
    }
}
