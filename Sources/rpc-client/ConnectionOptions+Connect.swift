import ArgumentParser
import Foundation
import RPCClient
import UV
import Wire

extension ConnectionOptions {
    var parsedEndpoint: Endpoint {
        get throws {
            if endpoint.hasPrefix("unix:") { return .unix(path: String(endpoint.dropFirst(5))) }
            guard let colon = endpoint.lastIndex(of: ":"), let port = Int(endpoint[endpoint.index(after: colon)...])
            else {
                throw ValidationError("--endpoint must be HOST:PORT or unix:PATH")
            }
            let host = endpoint[..<colon].trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            return .tcp(host: host, port: port)
        }
    }

    var timeoutDuration: Duration { .milliseconds(Int(timeout * 1000)) }

    /// Connects, runs `body`, closes; RPC errors become a message and exit code 1.
    func withClient<Result>(_ body: (RPCClient) async throws -> Result) async throws -> Result {
        let client: RPCClient
        do {
            client = try await RPCClient.connect(to: try parsedEndpoint)
        } catch let error as RPCError {
            throw CallFailed(error: error)
        }
        do {
            let result = try await body(client)
            await client.close()
            return result
        } catch let error as RPCError {
            await client.close()
            throw CallFailed(error: error)
        }
    }
}

/// An RPC error, printed as `error: CODE: message` with exit code 1.
struct CallFailed: Error, CustomStringConvertible {
    var error: RPCError
    var description: String { "\(error.code.name): \(error.message)" }
}
