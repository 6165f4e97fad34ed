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

    func fleet(_ server: HomedProcess, state: String, _ extra: [String] = []) throws -> [String: Any] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.loadgenPath)
        process.arguments =
            [
                "fleet", "--endpoint", "unix:\(server.socketPath)",
                "--token-file", server.directory.appendingPathComponent("owner.token").path,
                "--homes", "2", "--accessories", "5", "--controllers", "2", "--duration", "1.5", "--warmup", "0.3",
                "--report-rate", "60", "--read-rate", "60", "--write-rate", "30", "--execute-rate", "10", "--state",
                state,
                "--json",
                "--no-progress",
            ] + extra
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
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
}
