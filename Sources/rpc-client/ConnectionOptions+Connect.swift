import ArgumentParser
import Foundation
import HomeClient
import RPCClient
import TLSOptions
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

    /// The connection's settings: TLS when asked for (`--tls`, or any of its files).
    var connectionConfiguration: ClientConnection.Configuration {
        get throws { try tls.homeRPCConfiguration() }
    }

    /// The bearer token: --token-file, else $HOMERPC_TOKEN, else ./homed-owner.token; with `--cert`
    /// and none of these, none (the client certificate authenticates, if homed maps it to an account).
    var token: String {
        get throws {
            if tokenFile == nil, let token = ProcessInfo.processInfo.environment["HOMERPC_TOKEN"], !token.isEmpty {
                return token
            }
            let path = tokenFile ?? "homed-owner.token"
            if tokenFile == nil, tls.cert != nil, !FileManager.default.fileExists(atPath: path) { return "" }
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ValidationError("cannot read the token file \(path): pass --token-file or set HOMERPC_TOKEN")
            }
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// The metadata of raw calls: the token, and `--trace-id`.
    var metadata: [MetadataEntry] {
        get throws {
            let authorization = MetadataEntry(key: "authorization", value: Array("Bearer \(try token)".utf8))
            guard let traceId else { return [authorization] }
            return [authorization, MetadataEntry(key: "trace-id", value: Array(traceId.utf8))]
        }
    }

    /// A typed client; runs `body` and closes it. Call failures print their status and exit 1.
    func withHomeClient<Result>(_ body: (HomeClient) async throws -> Result) async throws -> Result {
        let client = HomeClient(
            endpoint: try parsedEndpoint,
            token: try token,
            timeout: timeoutDuration,
            connection: try connectionConfiguration
        )
        do {
            let result = try await HomeClient.$traceID.withValue(traceId) { try await body(client) }
            await client.close()
            return result
        } catch let error as HomeClientError {
            await client.close()
            throw CallFailed(message: error.description)
        }
    }

    /// Connects, runs `body`, closes; RPC errors become a message and exit code 1.
    func withClient<Result>(_ body: (RPCClient) async throws -> Result) async throws -> Result {
        let client: RPCClient
        do {
            client = try await RPCClient.connect(to: try parsedEndpoint, configuration: try connectionConfiguration)
        } catch let error as RPCError {
            throw CallFailed(message: "\(error.code.name): \(error.message)")
        }
        do {
            let result = try await body(client)
            await client.close()
            return result
        } catch let error as RPCError {
            await client.close()
            // With the HomeKit code and field of the error's details, as the typed commands print them.
            throw CallFailed(message: HomeClientError(error).description)
        }
    }
}

/// A failed call, printed as `Error: CODE: message [HomeKit code]` with exit code 1.
struct CallFailed: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
