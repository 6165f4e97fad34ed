import HomeClient
import HomeProto
import Testing

/// `home.v1.ServerInfo/Get` tells an operator what the store's commits cost: every change waits for
/// one, so their count and duration are part of every write's latency.
@Suite(.timeLimit(.minutes(1))) struct ServerInfoCommitTests {
    @Test func theStoresCommitsAreCountedAndTimed() async throws {
        let server = try await HomedProcess.launch()
        let client = server.client()
        let before = try await client.call(
            "home.v1.ServerInfo/Get",
            Home_V1_ServerInfoRequest(),
            returning: Home_V1_ServerInfoResponse.self
        ).commits
        let home = client.home(try await client.addHome(named: "Home").id.uuid)
        for name in ["Hall", "Kitchen", "Study"] { _ = try await home.addRoom(named: name) }
        let after = try await client.call(
            "home.v1.ServerInfo/Get",
            Home_V1_ServerInfoRequest(),
            returning: Home_V1_ServerInfoResponse.self
        ).commits
        // Each awaited mutation was answered after a commit of its own.
        #expect(after.count >= before.count + 4)
        #expect(after.changes >= before.changes + 4 * 2)
        #expect(after.durationMaxUs > 0)
        #expect(after.durationP50Us > 0 && after.durationP50Us <= after.durationP99Us)
        // The percentiles come from power-of-two buckets; none reads above the longest commit.
        #expect(after.durationP99Us <= after.durationMaxUs, "p99 \(after.durationP99Us), max \(after.durationMaxUs)")
        #expect(after.slow <= after.count)
        await client.close()
        _ = server.stop()
    }
}
