import Foundation
import HomeClient
import HomeProto
import RPCClient
import SwiftProtobuf
import Testing
import Wire

/// What a client sees when the disk fills under a real homed: the lost change and every later one
/// fail with INTERNAL and HomeKit 52, the health check says NOT_SERVING, and a restart on a disk
/// with room finds every change that was acknowledged.
@Suite struct FailedCommitTests {
    @Test func aCommitThatCannotBeWrittenAnswers52AndTheServerStopsServing() async throws {
        let server = try await HomedProcess.launch()
        let setup = server.client()
        let homeID = try await setup.addHome(named: "Disk Home").id.uuid
        await setup.close()
        server.stop()

        // Files may grow a little past what the store holds now: the first commits fit, a later one
        // does not, as on a disk that fills.
        let largest =
            try [server.storePath, server.storePath + "-wal"].map { path in
                FileManager.default.fileExists(atPath: path)
                    ? (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0) : 0
            }.max() ?? 0
        server.fileSizeLimitKiB = largest / 1024 + 96
        try await server.start()
        let client = server.client()
        let home = client.home(homeID)
        var acknowledged: [String] = []
        var refusal: HomeClientError?
        for number in 0..<5_000 {
            let name = "Room \(number) " + String(repeating: "x", count: 40)
            do {
                _ = try await home.addRoom(named: name)
                acknowledged.append(name)
            } catch {
                refusal = error
                break
            }
        }
        let failed = try #require(refusal, "5,000 rooms fit in \(largest / 1024 + 96) KiB")
        #expect(failed.status == .internal, "\(failed)")
        #expect(failed.homeKitCode == 52, "\(failed)")
        #expect(failed.message.hasPrefix("the change could not be made durable: "), "\(failed)")
        #expect(acknowledged.count > 0, "no commit fitted: the limit is too small to test anything")

        // The store takes no more changes, with the same code, and says so to health checks.
        await expectFailure(.internal, 52, "a change after the failed commit") {
            _ = try await home.addRoom(named: "Later")
        }
        let probe = try await RPCClient.connect(to: server.endpoint)
        let answer = try await probe.unary(
            "home.v1.Health/Check",
            request: try Home_V1_HealthCheckRequest().serializedBytes()
        )
        #expect(try Home_V1_HealthCheckResponse(serializedBytes: answer).status == .notServing)
        await probe.close()
        // ServerInfo keeps the cause as SQLite and the system gave it: a write past the file-size
        // limit fails with EFBIG, under SQLite's I/O error.
        let info = try await client.call(
            "home.v1.ServerInfo/Get",
            Home_V1_ServerInfoRequest(),
            returning: Home_V1_ServerInfoResponse.self
        )
        #expect(info.hasStoreFailure)
        #expect(info.storeFailure.resultCode & 0xFF == 10, "SQLITE_IOERR: \(info.storeFailure)")
        #expect(info.storeFailure.systemErrno == EFBIG, "\(info.storeFailure)")
        #expect(info.storeFailure.systemErrorName == "File too large")
        #expect(failed.message.contains("errno \(EFBIG) (File too large)"), "\(failed)")
        await client.close()

        // With room on the disk again, a restart serves exactly what was acknowledged.
        server.crash()
        server.fileSizeLimitKiB = nil
        try await server.start()
        let reopened = server.client()
        let rooms = Set(try await reopened.home(homeID).get().rooms.map(\.name))
        #expect(acknowledged.allSatisfy(rooms.contains), "an acknowledged room was lost")
        #expect(!rooms.contains("Later"))
        await reopened.close()
    }
}
