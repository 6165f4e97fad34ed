import Foundation
import HomeClient
import HomeProto
import Testing

/// `loadgen fleet` at small scale against a real `homed`: every operation kind completes, every
/// acknowledged report reaches its home's subscriber, and a second run attaches with the kept
/// credentials instead of pairing again.
@Suite struct FleetTests {
    static var loadgenPath: String {
        URL(fileURLWithPath: HomedProcess.executablePath).deletingLastPathComponent()
            .appendingPathComponent("loadgen").path
    }

    /// A `loadgen fleet` run against `server`, its JSON report written to a file.
    struct Run {
        let process: Process
        let output: URL

        /// Waits for the run to end and reads its report.
        func finish() throws -> [String: Any] {
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            let data = try Data(contentsOf: output)
            return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        }
    }

    func startFleet(_ server: HomedProcess, state: String, duration: Double = 1.5, _ extra: [String] = []) throws -> Run
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.loadgenPath)
        process.arguments =
            [
                "fleet", "--endpoint", "unix:\(server.socketPath)",
                "--token-file", server.directory.appendingPathComponent("owner.token").path,
                "--homes", "2", "--accessories", "5", "--controllers", "2", "--duration", String(duration),
                "--warmup", "0.3", "--report-rate", "60", "--read-rate", "60", "--write-rate", "30",
                "--execute-rate", "10", "--state", state, "--json", "--no-progress",
            ] + extra
        let output = server.directory.appendingPathComponent("fleet-\(UUID().uuidString).json")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: output)
        try process.run()
        return Run(process: process, output: output)
    }

    func fleet(_ server: HomedProcess, state: String, _ extra: [String] = []) throws -> [String: Any] {
        try startFleet(server, state: state, extra).finish()
    }

    @Test(arguments: [0, 3])
    func everyKindCompletesAndEveryReportIsDelivered(bridged: Int) async throws {
        let server = try await HomedProcess.launch()
        let state = server.directory.appendingPathComponent("fleet.json").path
        for run in 1...2 {
            // With bridges of 3: each home's 5 accessories behind two bridges (3 and 2).
            let result = try fleet(server, state: state, ["--bridged", String(bridged)])
            #expect(result["accessories"] as? Int == 10, "run \(run)")
            for kind in ["report", "read", "write", "execute", "notification"] {
                let figures = result[kind] as? [String: Any]
                #expect((figures?["completed"] as? Int ?? 0) > 0, "run \(run): no \(kind) completed")
                #expect(figures?["errors"] as? Int == 0, "run \(run): \(kind) errors")
            }
            let acknowledged = result["reports_acknowledged"] as? Int ?? -1
            #expect(acknowledged > 0)
            #expect(result["report_events"] as? Int == acknowledged, "run \(run): an acknowledged report went unseen")
            #expect(result["reports_without_event"] as? Int == 0)
            #expect(result["repeated_events"] as? Int == 0)
            #expect(result["link_failures"] as? Int == 0)
        }
        // The second run used the same homes and accessories (attached, not paired again).
        let client = server.client()
        let homes = try await client.listHomes()
        #expect(homes.count == 2)
        var accessories = 0
        for home in homes { accessories += try await client.home(home.id.uuid).get().accessories.count }
        // Bridges are accessories too: 10 counters, plus two bridges per home when bridged.
        #expect(accessories == (bridged == 0 ? 10 : 14))
        await client.close()
    }

    /// homed killed under the fleet and started again: every accessory attaches again, both
    /// controllers reconnect, both subscribers resume from their last revision (no Resync), every
    /// kind completes again afterwards, and no acknowledged report goes unseen, the crash
    /// notwithstanding.
    @Test func theFleetComesBackAfterTheServerIsKilled() async throws {
        let server = try await HomedProcess.launch()
        let state = server.directory.appendingPathComponent("fleet.json").path
        // The first run pairs; the second, under which the server dies, attaches.
        _ = try fleet(server, state: state)
        // The first run's reports count too: the second's are those beyond them (without this the
        // server was killed before the second run had connected, once the first made 100).
        let reportsBefore = try await server.calls(of: "home.v1.AccessoryLink/ReportValues")
        let run = try startFleet(server, state: state, duration: 10)
        // Killed once the fleet is at work: its accessories report through the server.
        try await eventually(within: 30) {
            try await server.calls(of: "home.v1.AccessoryLink/ReportValues") >= reportsBefore + 100
        }
        server.crash()
        try await server.start()
        let result = try run.finish()
        #expect(result["link_failures"] as? Int == 10)
        #expect(result["relinks"] as? Int == 10)
        #expect(result["links_lost"] as? Int == 0)
        #expect(result["links_down"] as? Int == 0)
        #expect(result["controller_reconnects"] as? Int == 2)
        #expect(result["subscription_ends"] as? Int == 2)
        #expect(result["resumed_subscriptions"] as? Int == 2)
        #expect(result["resyncs"] as? Int == 0)
        #expect(result["reports_without_event"] as? Int == 0, "an acknowledged report went unseen")
        #expect(result["repeated_events"] as? Int == 0, "the resumed streams repeated an event")
        let acknowledged = result["reports_acknowledged"] as? Int ?? -1
        #expect((result["report_events"] as? Int ?? 0) >= acknowledged)
        // The last whole second ran as before the crash.
        let timeline = result["timeline"] as? [[String: Int]] ?? []
        let last = timeline.dropLast().last ?? [:]
        for kind in ["report", "read", "write", "notification"] {
            #expect((last[kind] ?? 0) > 0, "no \(kind) completed in the last second: \(timeline)")
        }
        server.stop()
    }
}
