import HomeClient
import HomeProto
import Synchronization
import Testing
import Wire

/// Expects `body` to fail with `status` and (when given) the HomeKit code `code`.
func expectFailure(
    _ status: StatusCode,
    _ code: Int32? = nil,
    _ what: String = "",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record(
            "\(what): expected \(status.name) \(code.map(String.init) ?? ""), but it succeeded",
            sourceLocation: sourceLocation
        )
    } catch let error as HomeClientError {
        #expect(error.status == status, "\(what): \(error)", sourceLocation: sourceLocation)
        if let code { #expect(error.homeKitCode == code, "\(what): \(error)", sourceLocation: sourceLocation) }
    } catch {
        Issue.record("\(what): unexpected \(error)", sourceLocation: sourceLocation)
    }
}

/// `bytes` as a request reaches a handler: a slice of the connection's input buffer, which starts
/// wherever the frame's payload lay (never at index 0), with other frames' bytes around it.
func asReceived(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
    let buffer: [UInt8] = [0xFF, 0x0A, 0x10] + bytes + [0x0A, 0x10, 0xFF]
    return buffer[3..<3 + bytes.count]
}

/// A count that tasks add to, for a test to wait until it reaches a number instead of sleeping.
final class Tally: Sendable {
    private let count = Mutex(0)

    func add() { count.withLock { $0 += 1 } }

    var value: Int { count.withLock { $0 } }

    /// Returns once the count is at least `target`.
    /// - Throws: when it is not within `seconds`.
    func reach(_ target: Int, within seconds: Int = 30) async throws {
        let value = self
        try await eventually(within: seconds) { value.value >= target }
    }
}

extension HomedProcess {
    /// How many calls of `method` the server has ended since it started (its ServerInfo).
    func calls(of method: String) async throws -> UInt64 {
        try await serverInfo().methods.first { $0.method == method }?.calls ?? 0
    }

    /// The server's ServerInfo, asked on a connection of its own.
    func serverInfo() async throws -> Home_V1_ServerInfoResponse {
        let client = client()
        defer { Task { await client.close() } }
        return try await client.call(
            "home.v1.ServerInfo/Get",
            Home_V1_ServerInfoRequest(),
            returning: Home_V1_ServerInfoResponse.self
        )
    }

    /// Calls the server has started and not ended, on every connection, not counting this one.
    func openCalls() async throws -> UInt64 {
        try await serverInfo().callsOpen - 1
    }

    /// Returns once the server holds at least `count` calls open (calls sent from other tasks have
    /// reached it and wait there), instead of sleeping and assuming they have.
    func waitForOpenCalls(_ count: UInt64) async throws {
        // Generous: each look is a new connection and a call, slow on a loaded machine.
        try await eventually(within: 30) { try await self.openCalls() >= count }
    }
}
