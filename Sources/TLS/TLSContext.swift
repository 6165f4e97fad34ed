import CLibSSL

/// What a server's TLS needs: its certificate chain and key, and for mutual TLS the CA that client
/// certificates must chain to.
public struct TLSServerConfiguration: Sendable, Hashable {
    /// PEM: the server's certificate first, then any intermediates.
    public var certificateChainPath: String
    /// PEM: the private key of the first certificate.
    public var privateKeyPath: String
    /// PEM: the CAs a client certificate must chain to. Set, every client must present one.
    public var clientCAPath: String?
    /// The ALPN names the listener speaks. A client that offers ALPN without any of them is refused;
    /// one that offers none is served.
    public var applicationProtocols: [String]

    public init(
        certificateChainPath: String,
        privateKeyPath: String,
        clientCAPath: String? = nil,
        applicationProtocols: [String]
    ) {
        self.certificateChainPath = certificateChainPath
        self.privateKeyPath = privateKeyPath
        self.clientCAPath = clientCAPath
        self.applicationProtocols = applicationProtocols
    }
}

/// What a client's TLS needs: whom to trust, and for mutual TLS its own certificate and key.
public struct TLSClientConfiguration: Sendable, Hashable {
    /// PEM: the CAs the server's certificate must chain to; `nil` trusts the system's roots.
    public var trustedCAPath: String?
    /// PEM: the client's certificate chain, for a server that asks for one (mutual TLS).
    public var certificateChainPath: String?
    /// PEM: the key of the client's certificate.
    public var privateKeyPath: String?
    /// The ALPN names offered; the server must pick one. By default HomeRPC's own protocol.
    public var applicationProtocols: [String]

    public init(
        trustedCAPath: String? = nil,
        certificateChainPath: String? = nil,
        privateKeyPath: String? = nil,
        applicationProtocols: [String] = [ApplicationProtocol.homeRPC]
    ) {
        self.trustedCAPath = trustedCAPath
        self.certificateChainPath = certificateChainPath
        self.privateKeyPath = privateKeyPath
        self.applicationProtocols = applicationProtocols
    }
}

/// ALPN protocol names HomeRPC's listeners speak.
public enum ApplicationProtocol {
    /// HomeRPC's own framing (docs/PROTOCOL.md).
    public static let homeRPC = "hrpc/1"
    /// gRPC, over HTTP/2.
    public static let http2 = "h2"
}

/// An OpenSSL context: the certificates, keys, trust and protocol choices sessions are made from.
/// Immutable once made (a certificate reload makes a new one; sessions keep the context they started
/// with), so it may be shared by threads.
public final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer
    let isServer: Bool
    /// The ALPN names in wire form (each prefixed by its length).
    private let protocolList: UnsafeMutableBufferPointer<UInt8>
    /// TLS 1.2 is the oldest version accepted.
    static let minimumVersion = TLS1_2_VERSION

    /// A server's context.
    /// - Throws: ``TLSError`` naming the file and OpenSSL's reason when a certificate, key or CA
    ///   cannot be loaded, or the key does not match the certificate.
    public convenience init(server configuration: TLSServerConfiguration) throws(TLSError) {
        try self.init(isServer: true, protocols: configuration.applicationProtocols)
        try loadChain(configuration.certificateChainPath, key: configuration.privateKeyPath)
        if let clientCA = configuration.clientCAPath {
            OpenSSLErrorQueue.clear()
            guard SSL_CTX_load_verify_locations(context, clientCA, nil) == 1,
                let names = SSL_load_client_CA_file(clientCA)
            else { throw .fromQueue("cannot load the client CA \(clientCA)") }
            SSL_CTX_set_client_CA_list(context, names)
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
        SSL_CTX_set_alpn_select_cb(context, Self.selectProtocol, nil)
        // No server-side session cache: resumption comes from tickets, which cost the server no memory.
        _ = homerpc_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_OFF))
    }

    /// A client's context.
    /// - Throws: ``TLSError`` when the trusted CAs, the certificate or the key cannot be loaded.
    public convenience init(client configuration: TLSClientConfiguration) throws(TLSError) {
        try self.init(isServer: false, protocols: configuration.applicationProtocols)
        OpenSSLErrorQueue.clear()
        if let trusted = configuration.trustedCAPath {
            guard SSL_CTX_load_verify_locations(context, trusted, nil) == 1 else {
                throw .fromQueue("cannot load the trusted CAs \(trusted)")
            }
        } else if SSL_CTX_set_default_verify_paths(context) != 1 {
            throw .fromQueue("cannot load the system's trusted CAs")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        switch (configuration.certificateChainPath, configuration.privateKeyPath) {
        case (let chain?, let key?): try loadChain(chain, key: key)
        case (nil, nil): break
        default: throw TLSError("a client certificate needs both the certificate chain and its key")
        }
        if !protocolList.isEmpty,
            SSL_CTX_set_alpn_protos(context, protocolList.baseAddress, UInt32(protocolList.count)) != 0
        {
            throw .fromQueue("cannot set the ALPN protocols")
        }
    }

    private init(isServer: Bool, protocols: [String]) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard let context = SSL_CTX_new(isServer ? TLS_server_method() : TLS_client_method()) else {
            throw .fromQueue("cannot create a TLS context")
        }
        self.context = context
        self.isServer = isServer
        let wire = protocols.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
        protocolList = .allocate(capacity: wire.count)
        _ = protocolList.initialize(from: wire)
        _ = homerpc_SSL_CTX_set_min_proto_version(context, Self.minimumVersion)
        // No renegotiation (TLS 1.2's, a denial-of-service lever; 1.3 has none), no compression.
        SSL_CTX_set_options(context, homerpc_SSL_OP_NO_RENEGOTIATION() | homerpc_SSL_OP_NO_COMPRESSION())
        // An idle session gives its 16 kB read and write buffers back.
        _ = homerpc_SSL_CTX_set_mode(context, homerpc_SSL_MODE_RELEASE_BUFFERS())
    }

    deinit {
        SSL_CTX_free(context)
        protocolList.deallocate()
    }

    private func loadChain(_ chain: String, key: String) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard SSL_CTX_use_certificate_chain_file(context, chain) == 1 else {
            throw .fromQueue("cannot load the certificate chain \(chain)")
        }
        guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
            throw .fromQueue("cannot load the private key \(key)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw .fromQueue("the private key \(key) does not match the certificate \(chain)")
        }
    }

    /// A new session for one connection; a client names the server it expects (checked against the
    /// certificate: a DNS name, or an IP address literal).
    public func makeSession(serverName: String? = nil) -> TLSSession {
        TLSSession(context: self, serverName: serverName)
    }

    /// The server's ALPN choice: the first of the client's names that the listener speaks (RFC 7301);
    /// none of them is a fatal no_application_protocol alert.
    private static let selectProtocol:
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt8>?,
            UnsafePointer<UInt8>?, UInt32, UnsafeMutableRawPointer?
        ) -> Int32 = { ssl, selected, selectedLength, offered, offeredLength, _ in
            guard let selected, let selectedLength, let offered, let session = TLSSession.of(ssl) else {
                return SSL_TLSEXT_ERR_ALERT_FATAL
            }
            let offeredList = UnsafeBufferPointer(start: offered, count: Int(offeredLength))
            let ours = UnsafeBufferPointer(session.context.protocolList)
            let speaks = protocolEntries(ours).map { Array(ours[$0.start..<$0.start + $0.length]) }
            let names = protocolEntries(offeredList)
            if let match = names.first(where: { speaks.contains(Array(offeredList[$0.start..<$0.start + $0.length])) })
            {
                selected.pointee = offered + match.start
                selectedLength.pointee = UInt8(match.length)
                return SSL_TLSEXT_ERR_OK
            }
            session.refusedProtocols = names.map {
                String(decoding: offeredList[$0.start..<$0.start + $0.length], as: UTF8.self)
            }
            return SSL_TLSEXT_ERR_ALERT_FATAL
        }

    /// The (offset, length) of each name in an ALPN list in wire form; stops at a malformed entry.
    private static func protocolEntries(_ list: UnsafeBufferPointer<UInt8>) -> [(start: Int, length: Int)] {
        var entries: [(start: Int, length: Int)] = []
        var offset = 0
        while offset < list.count {
            let length = Int(list[offset])
            guard length > 0, offset + 1 + length <= list.count else { break }
            entries.append((offset + 1, length))
            offset += 1 + length
        }
        return entries
    }
}
