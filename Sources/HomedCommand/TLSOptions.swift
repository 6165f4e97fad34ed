import ArgumentParser
import Foundation
import HomeAPI
import Logging
import RPCServer
import TLS
import UV

/// TLS on the TCP listeners, as flags; the certificate and key are read again on SIGHUP.
struct TLSOptions: ParsableArguments {
    @Option(
        name: .customLong("tls-cert"),
        help: """
            PEM certificate chain (the server's certificate first): serve TLS 1.3 and 1.2 on the TCP \
            listeners (ours with ALPN hrpc/1, the gRPC door with h2). Read again on SIGHUP.
            """
    )
    var certificateChain: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key of --tls-cert's certificate. Read again on SIGHUP.")
    var privateKey: String?

    @Option(
        name: .customLong("tls-client-ca"),
        help: """
            PEM CA certificates: require every TCP client to present a certificate they signed (mutual \
            TLS). Read again on SIGHUP.
            """
    )
    var clientCA: String?

    @Option(
        name: .customLong("tls-client-identities"),
        help: """
            File mapping client certificate subjects (RFC 2253) to accounts and accessories, one a line: \
            'account UUID SUBJECT' (a connection with that certificate and no token acts as the account) \
            or 'accessory UUID SUBJECT' (its link may attach only that accessory). Needs \
            --tls-client-ca. Read again on SIGHUP.
            """
    )
    var clientIdentities: String?

    var isEnabled: Bool { certificateChain != nil }

    func validate() throws {
        guard (certificateChain == nil) == (privateKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
        guard clientCA == nil || isEnabled else {
            throw ValidationError("--tls-client-ca needs --tls-cert and --tls-key")
        }
        guard clientIdentities == nil || clientCA != nil else {
            throw ValidationError("--tls-client-identities needs --tls-client-ca (mutual TLS)")
        }
    }

    /// Server contexts for each door, from the files as they are now; `nil` without TLS.
    /// - Throws: ``TLS/TLSError`` naming the file that could not be used.
    func contexts() throws(TLSError) -> [RPCServer.Door: TLSContext]? {
        guard let certificateChain, let privateKey else { return nil }
        var contexts: [RPCServer.Door: TLSContext] = [:]
        for (door, name) in [(RPCServer.Door.homeRPC, ApplicationProtocol.homeRPC), (.grpc, ApplicationProtocol.http2)]
        {
            contexts[door] = try TLSContext(
                server: TLSServerConfiguration(
                    certificateChainPath: certificateChain,
                    privateKeyPath: privateKey,
                    clientCAPath: clientCA,
                    applicationProtocols: [name]
                )
            )
        }
        return contexts
    }

    /// Reads the files again and gives the server's TLS listeners the new contexts; open connections
    /// keep theirs. A file that cannot be used leaves the old contexts in place (and is logged).
    func reload(into server: RPCServer, logger: Logger) {
        do {
            guard let contexts = try contexts() else { return }
            for (door, context) in contexts { server.replaceTLSContext(context, on: door) }
            logger.info("TLS certificate reloaded", metadata: ["certificate": "\(certificateChain ?? "")"])
        } catch {
            logger.error("TLS reload failed: the previous certificate stays", metadata: ["reason": "\(error)"])
        }
    }

    /// Fills `identities` from `--tls-client-identities`, if given.
    /// - Throws: a ``StartError`` naming the file or line that cannot be used.
    func loadIdentities(into identities: ClientIdentities) throws {
        guard let clientIdentities else { return }
        do {
            try identities.replace(with: try String(contentsOfFile: clientIdentities, encoding: .utf8))
        } catch {
            throw StartError("cannot use --tls-client-identities \(clientIdentities): \(error)")
        }
    }

    /// Reads `--tls-client-identities` again: new connections authenticate by the new mappings, and
    /// a file that cannot be used leaves the old ones (and is logged).
    func reloadIdentities(into identities: ClientIdentities, logger: Logger) {
        do {
            try loadIdentities(into: identities)
        } catch {
            logger.error("client identities not reloaded: the previous ones stay", metadata: ["reason": "\(error)"])
        }
    }

    /// Warns when `host` is reachable from other machines and the listener would be plain: tokens,
    /// setup codes and accessory credentials would cross the network in clear.
    func warnIfExposed(host: String, logger: Logger) {
        guard !isEnabled, !Self.isLoopback(host) else { return }
        logger.warning(
            "listening on a non-loopback address without TLS: tokens, setup codes and home data cross the network in clear (pass --tls-cert and --tls-key)",
            metadata: ["host": "\(host)"]
        )
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "::1" || host.hasPrefix("127.") || host == "localhost"
    }
}
