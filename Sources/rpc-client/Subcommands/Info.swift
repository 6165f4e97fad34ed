import ArgumentParser
import Foundation
import HomeProto
import RPCClient
import SwiftProtobuf

/// `rpc-client info`: the server's version, uptime, counters and per-method metrics, as tables (the
/// whole ServerInfoResponse as JSON with --json).
struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show server version, uptime and metrics.")

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let request: [UInt8] = try Home_V1_ServerInfoRequest().serializedBytes()
        let reply = try await connection.withClient { client in
            try await client.unary(
                "home.v1.ServerInfo/Get",
                request: request,
                timeout: connection.timeoutDuration,
                metadata: try connection.metadata
            )
        }
        let info = try Home_V1_ServerInfoResponse(serializedBytes: reply)
        if connection.json {
            print(try info.jsonString())
        } else {
            Self.printTables(info)
        }
    }

    /// The server's figures as a table of name and value, then one row per method called so far.
    static func printTables(_ info: Home_V1_ServerInfoResponse) {
        func counts<Key>(_ map: [Key: UInt64], _ name: (Key) -> String) -> String {
            map.isEmpty ? "none" : map.map { "\(name($0.key)) \($0.value)" }.sorted().joined(separator: ", ")
        }
        func megabytes(_ bytes: UInt64) -> String { String(format: "%.1f MB", Double(bytes) / 1_000_000) }
        var rows: [[String]] = [
            ["version", info.version],
            ["uptime", "\(info.uptimeMs / 1000) s"],
            ["draining", info.draining ? "yes" : "no"],
            [
                "connections open / accepted / rejected",
                "\(info.connectionsOpen) / \(info.connectionsAccepted) / \(info.connectionsRejected)",
            ],
            ["connections closed, by reason", counts(info.connectionsClosedByReason) { $0 }],
            ["calls total / open", "\(info.callsTotal) / \(info.callsOpen)"],
            ["calls refused, by status", counts(info.refusedByStatus) { "\($0)" }],
            ["resident memory", megabytes(info.residentBytes)],
            ["CPU user / system", "\(info.cpuUserMs) ms / \(info.cpuSystemMs) ms"],
            ["buffered for peers / limit", "\(megabytes(info.bufferedBytes)) / \(megabytes(info.bufferedBytesLimit))"],
            ["held by change streams", megabytes(info.subscriptionHeldBytes)],
            [
                "advertised accessories / limit",
                "\(megabytes(info.advertisedBytes)) / \(megabytes(info.advertisedBytesLimit))",
            ],
            [
                "commits (changes; p50 / p99 / max; 2 ms or more)",
                "\(info.commits.count) (\(info.commits.changes); \(info.commits.durationP50Us) / "
                    + "\(info.commits.durationP99Us) / \(info.commits.durationMaxUs) µs; \(info.commits.slow))",
            ],
        ]
        if info.hasStoreFailure {
            let failure = info.storeFailure
            rows.append(["store failure", "\(failure.message) (\(failure.resultName), \(failure.systemErrorName))"])
        }
        Output.table(["SERVER", "VALUE"], rows)
        print("")
        Output.table(
            ["METHOD", "CALLS", "ERRORS", "P50 µs", "P90 µs", "P99 µs", "MEAN µs"],
            info.methods.map {
                [
                    $0.method, "\($0.calls)", "\($0.errors)", "\($0.latencyP50Us)", "\($0.latencyP90Us)",
                    "\($0.latencyP99Us)", "\($0.latencyMeanUs)",
                ]
            }
        )
    }
}
