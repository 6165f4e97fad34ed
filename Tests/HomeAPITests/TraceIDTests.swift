import Foundation
import HomeClient
import Testing

/// A trace id set around SDK calls, or given to `rpc-client --trace-id`, reaches homed's log line
/// for each of those calls, and only theirs.
@Suite struct TraceIDTests {
    @Test func aTraceIDFromTheSDKOrTheCLIIsInHomedsLogLineForEachCallMadeWithIt() async throws {
        let server = try await HomedProcess.launch(arguments: ["--log-level", "debug"], capturingLog: true)
        let client = server.client()
        try await HomeClient.$traceID.withValue("sdk-trace-1") {
            _ = try await client.addHome(named: "Traced")
        }
        _ = try await client.listHomes()
        await client.close()
        let cli = CommandLineTests()
        #expect(try cli.cli(server, "home", "list", "--trace-id", "cli-trace-2").status == 0)
        #expect(
            try cli.cli(server, "call", "home.v1.HomeService/GetHome", "{}", "--trace-id", "cli-trace-3").status == 1
        )
        #expect(server.stop() == 0)

        let lines = try String(contentsOfFile: server.logPath, encoding: .utf8).split(separator: "\n")
        func calls(_ method: String) -> [Substring] {
            lines.filter { $0.contains("method=home.v1.HomeService/\(method) ") }
        }
        #expect(calls("AddHome").count == 1 && calls("AddHome").allSatisfy { $0.contains("trace-id=sdk-trace-1") })
        let listed = calls("ListHomes")
        #expect(listed.count == 2, "\(listed)")
        #expect(listed.filter { $0.contains("trace-id=cli-trace-2") }.count == 1)
        #expect(listed.filter { $0.contains("trace-id") }.count == 1, "the untraced call carries none")
        // A refused request (no home id) is logged with its status and message too.
        let got = calls("GetHome")
        #expect(
            got.count == 1 && got.allSatisfy { $0.contains("trace-id=cli-trace-3") && $0.contains("INVALID_ARGUMENT") }
        )
    }
}
