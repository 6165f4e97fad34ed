import ArgumentParser
import Foundation
import HomeClient
import HomeProto
import RPCClient
import SwiftProtobuf
import Wire

/// `rpc-client call METHOD [JSON]`: any method, its request in protobuf's JSON mapping (ids as
/// base64, as that mapping writes bytes), its response printed as JSON. Like grpcurl.
struct Call: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Call any method with a JSON request; prints the JSON response.",
        discussion: """
            Example: rpc-client call home.v1.HomeService/AddHome '{"name": "My Home"}'
            Bytes fields (ids) are base64 in JSON, as protobuf's JSON mapping writes them.
            """
    )

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The full method name, e.g. home.v1.HomeService/ListHomes (see `rpc-client methods`).")
    var method: String
    @Argument(help: "The request as JSON (default: {}).") var request = "{}"
    @Option(help: "An idempotency key: a retry with the same key returns the first outcome.")
    var idempotencyKey: String?

    func run() async throws {
        guard let entry = MethodTypes.named(method) else {
            throw ValidationError("unknown method \(method); `rpc-client methods` lists them")
        }
        let message: any SwiftProtobuf.Message
        do {
            message = try entry.request.init(jsonString: request)
        } catch {
            throw ValidationError("the request is not a valid \(entry.request.protoMessageName) in JSON: \(error)")
        }
        var metadata = try connection.metadata
        if let idempotencyKey {
            metadata.append(MetadataEntry(key: "idempotency-key", value: Array(idempotencyKey.utf8)))
        }
        let bytes: [UInt8] = try message.serializedBytes()
        if entry.isStreaming {
            // One JSON line per message, until the stream ends (or Ctrl-C).
            try await connection.withClient { client in
                // A stream runs until it ends: no deadline.
                let stream = client.serverStream(method, request: bytes, metadata: metadata)
                for try await reply in stream {
                    let line = try entry.response.init(serializedBytes: reply).jsonString() + "\n"
                    FileHandle.standardOutput.write(Data(line.utf8))
                }
            }
            return
        }
        let reply = try await connection.withClient { client in
            try await client.unary(method, request: bytes, timeout: connection.timeoutDuration, metadata: metadata)
        }
        let response = try entry.response.init(serializedBytes: reply)
        print(try response.jsonString())
    }
}

/// `rpc-client methods`: every method with its request type.
struct Methods: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List every method with its request and response types.")

    func run() {
        Output.table(
            ["METHOD", "REQUEST", "RESPONSE"],
            MethodTypes.all.map { [$0.name, $0.request.protoMessageName, $0.response.protoMessageName] }
        )
    }
}
