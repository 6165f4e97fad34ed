import ArgumentParser
import Foundation
import HomeClient
import HomeProto
import RPCClient
import SwiftProtobuf
import Wire

/// `rpc-client call METHOD [JSON]`: any method, its request in protobuf's JSON mapping (ids as UUIDs
/// or base64: CallRequest), its response printed as JSON. Like grpcurl.
struct Call: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Call any method with a JSON request; prints the JSON response.",
        discussion: """
            Example: rpc-client call AddRoom '{"homeId": "0F2C6A3E-8B4D-4C61-9E7A-3B5D1F2A4C68", "name": "Study"}'
            A method is named in full (home.v1.HomeService/AddRoom) or by any tail of that only one
            method ends with (HomeService/AddRoom, AddRoom). Ids are UUIDs, or base64 as protobuf's
            JSON mapping writes bytes (and as responses print them).
            """
    )

    @OptionGroup var connection: ConnectionOptions
    @Argument(
        help: "The method: its full name (home.v1.HomeService/ListHomes) or a tail only it ends with (ListHomes)."
    )
    var method: String
    @Argument(help: "The request as JSON (default: {}).") var request = "{}"
    @Option(help: "An idempotency key: a retry with the same key returns the first outcome.")
    var idempotencyKey: String?

    /// An unknown method or a malformed request is a usage error: reported here, under `call`'s usage.
    func validate() throws {
        _ = try CallRequest.parse(request, as: try CallRequest.method(named: method).request)
    }

    func run() async throws {
        let entry = try CallRequest.method(named: method)
        let message = try CallRequest.parse(request, as: entry.request)
        var metadata = try connection.metadata
        if let idempotencyKey {
            metadata.append(MetadataEntry(key: "idempotency-key", value: Array(idempotencyKey.utf8)))
        }
        let bytes: [UInt8] = try message.serializedBytes()
        if entry.isStreaming {
            // One JSON line per message, until the stream ends (or Ctrl-C).
            try await connection.withClient { client in
                // A stream runs until it ends: no deadline.
                let stream = client.serverStream(entry.name, request: bytes, metadata: metadata)
                for try await reply in stream {
                    let line = try entry.response.init(serializedBytes: reply).jsonString() + "\n"
                    FileHandle.standardOutput.write(Data(line.utf8))
                }
            }
            return
        }
        let reply = try await connection.withClient { client in
            try await client.unary(entry.name, request: bytes, timeout: connection.timeoutDuration, metadata: metadata)
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
