public import ArgumentParser
public import RPCClient
public import TLS
public import UV

/// The command-line tools' TLS flags (rpc-client's, loadgen's): whom to trust, and a certificate
/// for mutual TLS.
public struct TLSClientOptions: ParsableArguments, Sendable {
    @Flag(help: "Connect over TLS (implied by --ca-file, --cert and --key).")
    public var tls = false

    @Option(help: "PEM CA certificates to trust for the server's certificate (default: the system's).")
    public var caFile: String?

    @Option(help: "PEM client certificate chain, for a server that requires mutual TLS (with --key).")
    public var cert: String?

    @Option(help: "PEM private key of --cert.")
    public var key: String?

    @Option(help: "The name the server's certificate must carry (default: the endpoint's host).")
    public var serverName: String?

    public init() {}

    public var isEnabled: Bool { tls || caFile != nil || cert != nil || key != nil }

    public func validate() throws {
        guard (cert == nil) == (key == nil) else { throw ValidationError("--cert and --key go together") }
    }

    /// A client context offering `protocols` over ALPN (Redis takes none), or `nil` without TLS.
    public func context(offering protocols: [String]) throws -> TLSContext? {
        guard isEnabled else { return nil }
        do {
            return try TLSContext(
                client: TLSClientConfiguration(
                    trustedCAPath: caFile,
                    certificateChainPath: cert,
                    privateKeyPath: key,
                    applicationProtocols: protocols
                )
            )
        } catch {
            throw ValidationError("cannot set up TLS: \(error)")
        }
    }

    /// homed's connection settings: `base` over TLS when asked for.
    public func homeRPCConfiguration(
        _ base: ClientConnection.Configuration = ClientConnection.Configuration()
    ) throws -> ClientConnection.Configuration {
        var configuration = base
        configuration.tls = try context(offering: [ApplicationProtocol.homeRPC])
        configuration.serverName = serverName
        return configuration
    }

    /// Connects a plain ``UV/Connection`` (to Redis) and puts TLS on it when asked for, as
    /// `ClientConnection` does for homed.
    public static func connect(
        to endpoint: Endpoint,
        on loop: EventLoop,
        tls: TLSContext?,
        completion: @escaping (Result<Connection, UVError>) -> Void
    ) throws(UVError) {
        try Connection.connect(to: endpoint, on: loop) { result in
            if case .success(let connection) = result, let tls {
                let host: String? = if case .tcp(let host, _) = endpoint { host } else { nil }
                do throws(UVError) {
                    try connection.secure(with: tls.makeSession(serverName: host))
                } catch {
                    return completion(.failure(error))
                }
            }
            completion(result)
        }
    }
}
