import ArgumentParser
import HomeProto
import RPCClient
import SwiftProtobuf

/// `rpc-client health`: prints SERVING or NOT_SERVING; exits 0 only when serving.
struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check whether the server is serving.")

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "Service to ask about; empty for the whole server.")
    var service = ""

    func run() async throws {
        var request = Home_V1_HealthCheckRequest()
        request.service = service
        let bytes: [UInt8] = try request.serializedBytes()
        let reply = try await connection.withClient { client in
            try await client.unary("home.v1.Health/Check", request: bytes, timeout: connection.timeoutDuration)
        }
        let response = try Home_V1_HealthCheckResponse(serializedBytes: reply)
        switch response.status {
        case .serving:
            print("SERVING")
        case .notServing:
            print("NOT_SERVING")
            throw ExitCode(2)
        default:
            print("UNKNOWN (\(response.status.rawValue))")
            throw ExitCode(2)
        }
    }
}
