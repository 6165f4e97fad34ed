import ArgumentParser
import HomeProto
import RPCClient
import SwiftProtobuf

/// `rpc-client info`: the server's version, uptime, counters and per-method metrics.
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
            let text = info.textFormatString()
            print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
        }
    }
}
