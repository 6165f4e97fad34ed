import Foundation
import HomeClient
import HomeProto
import Testing

/// The server closes a connection without calls after `--idle-timeout` (300 s by default; docs/API.md,
/// "Conventions"): the SDK's next call, read or mutation, goes out on a new connection without the
/// caller seeing anything.
@Suite(.timeLimit(.minutes(2))) struct IdleReconnectTests {
    @Test func callsAfterTheIdleTimeoutReconnectUnnoticed() async throws {
        let server = try await HomedProcess.launch(arguments: ["--idle-timeout", "2"])
        let client = server.client()
        let home = client.home(try await client.addHome(named: "Idle Home").id.uuid)
        // Another client watches the server's count of idle closes; it calls every 50 ms (as
        // `eventually` polls), so its own connection never idles.
        let watcher = server.client()
        func idleCloses() async throws -> UInt64 {
            try await watcher.call(
                "home.v1.ServerInfo/Get",
                Home_V1_ServerInfoRequest(),
                returning: Home_V1_ServerInfoResponse.self
            ).connectionsClosedByReason["idle_timeout"] ?? 0
        }
        func waitForIdleClose(after count: UInt64) async throws {
            try await eventually(within: 20) { try await idleCloses() > count }
        }

        try await waitForIdleClose(after: 0)
        #expect(try await client.listHomes().map(\.name) == ["Idle Home"])
        try await waitForIdleClose(after: 1)
        _ = try await home.addRoom(named: "After Idle")
        #expect(try await home.get().rooms.filter { $0.name == "After Idle" }.count == 1)
        await watcher.close()
        await client.close()
    }
}
