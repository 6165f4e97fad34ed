import Foundation
import HomeClient
import Testing

/// A trace id set around SDK calls reaches homed's log line for each of them, and only theirs.
@Suite struct TraceIDTests {
    @Test func theSDKsTaskLocalTraceIDIsInHomedsLogLineForEachCallMadeWithIt() async throws {
        let server = try await HomedProcess.launch(arguments: ["--log-level", "debug"], capturingLog: true)
        let client = server.client()
        try await HomeClient.$traceID.withValue("sdk-trace-1") {
            _ = try await client.addHome(named: "Traced")
        }
        _ = try await client.listHomes()
        await client.close()
        #expect(server.stop() == 0)
        let lines = try String(contentsOfFile: server.logPath, encoding: .utf8).split(separator: "\n")
        let added = lines.filter { $0.contains("method=home.v1.HomeService/AddHome") }
        let listed = lines.filter { $0.contains("method=home.v1.HomeService/ListHomes") }
        #expect(added.count == 1 && added.allSatisfy { $0.contains("trace-id=sdk-trace-1") }, "\(added)")
        #expect(listed.count == 1 && listed.allSatisfy { !$0.contains("trace-id") }, "\(listed)")
    }
}
