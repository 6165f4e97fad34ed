import CLibSSL
public import UV

/// One connection's TLS: an OpenSSL session whose records pass through memory (``MemoryBIO``), so
/// the connection's own loop reads and writes the socket and no thread is added. Installed with
/// ``UV/Connection/secure(with:)``. Loop thread only.
public final class TLSSession: ConnectionSecurity {
    let context: TLSContext
    private let ssl: OpaquePointer
    /// The bytes the socket read, lent during ``open(_:into:output:)``; the BIO reads them from here.
    private var input = UnsafeRawBufferPointer(start: nil, count: 0)
    /// Records OpenSSL wrote (through the BIO) during the call in progress.
    private var outbound: [UInt8] = []
    /// Where a ``seal(_:into:)`` in progress sends its records instead (straight to the socket).
    private var sink: ((UnsafeRawBufferPointer) -> Void)?
    /// Plaintext written before the handshake finished, sent when it does.
    private var heldPlaintext: [UInt8] = []
    public private(set) var isHandshakeComplete = false
    private var hasFailed = false
    /// The client's ALPN names when none was one the listener speaks (for the failure's reason).
    var refusedProtocols: [String]?
    /// Who the session is with (an address), for logs.
    public var peer: String?
    /// Runs once, when the handshake completes (a server counts handshakes with it).
    public var onHandshakeComplete: ((TLSSession) -> Void)?

    init(context: TLSContext, serverName: String?) {
        self.context = context
        guard let ssl = SSL_new(context.context) else { fatalError("SSL_new failed: out of memory") }
        self.ssl = ssl
        SSL_set_ex_data(ssl, Self.sessionIndex, Unmanaged.passUnretained(self).toOpaque())
        let bio = MemoryBIO.make(for: self)
        SSL_set_bio(ssl, bio, bio)
        if context.isServer {
            SSL_set_accept_state(ssl)
        } else {
            SSL_set_connect_state(ssl)
            if let serverName { expect(serverName) }
        }
    }

    deinit {
        SSL_free(ssl)
    }

    /// The slot in each SSL object that points back at its session (for the ALPN callback): OpenSSL's
    /// application-data slot (`SSL_set_app_data`, a macro Swift cannot import).
    private static let sessionIndex: Int32 = 0

    static func of(_ ssl: OpaquePointer?) -> TLSSession? {
        SSL_get_ex_data(ssl, sessionIndex).map { Unmanaged<TLSSession>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Checks the server's certificate against `name` (an IP literal or a DNS name, which also goes
    /// out as SNI).
    private func expect(_ name: String) {
        let parameters = SSL_get0_param(ssl)
        if X509_VERIFY_PARAM_set1_ip_asc(parameters, name) != 1 {
            OpenSSLErrorQueue.clear()
            _ = SSL_set1_host(ssl, name)
            _ = homerpc_SSL_set_tlsext_host_name(ssl, name)
        }
    }

    // MARK: What the handshake chose

    /// The ALPN name both sides agreed on, if the client offered any.
    public var applicationProtocol: String? {
        var name: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &name, &length)
        guard let name, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: name, count: Int(length)), as: UTF8.self)
    }

    /// "TLSv1.3" or "TLSv1.2".
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// The subject of the peer's verified certificate (RFC 2253, "CN=kitchen,O=Example"), if it sent
    /// one: read once, when the handshake completes.
    public private(set) var peerSubject: String?

    private func readPeerSubject() -> String? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        var buffer = [CChar](repeating: 0, count: 1024)
        let length = homerpc_subject_rfc2253(certificate, &buffer, Int32(buffer.count))
        guard length >= 0 else { return nil }
        return String(decoding: buffer[..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: ConnectionSecurity

    public func start(output: inout [UInt8]) {
        guard !context.isServer else { return }
        OpenSSLErrorQueue.clear()
        _ = SSL_do_handshake(ssl)  // wants the server's answer; the ClientHello is in `outbound`
        take(into: &output)
    }

    public func plaintextCapacity(forReading count: Int) -> Int {
        // A record's plaintext is never longer than the record, but a record begun in an earlier read
        // (held by OpenSSL) may end in this one: room for one more record's plaintext.
        count + Self.maxRecordPlaintext
    }

    static let maxRecordPlaintext = 16 * 1024

    public func open(
        _ bytes: UnsafeRawBufferPointer,
        into plaintext: UnsafeMutableRawBufferPointer,
        output: inout [UInt8]
    ) -> SecurityOpening {
        guard !hasFailed else { return SecurityOpening(plaintextCount: 0) }
        input = bytes
        defer { input = UnsafeRawBufferPointer(start: nil, count: 0) }
        // No ERR_clear_error here or before a write (1% of a pipelined read's time): a failure
        // drains the queue it reads its reason from, and nothing else leaves errors on it.
        var opening = SecurityOpening(plaintextCount: 0)
        if !isHandshakeComplete {
            let result = SSL_do_handshake(ssl)
            if result == 1 {
                finishHandshake()
            } else {
                let error = SSL_get_error(ssl, result)
                if error != SSL_ERROR_WANT_READ { opening.failure = failureReason(error, during: "handshake") }
                take(into: &output)
                if opening.failure != nil { hasFailed = true }
                return opening
            }
        }
        reading: while opening.plaintextCount < plaintext.count {
            let count = SSL_read(
                ssl,
                plaintext.baseAddress! + opening.plaintextCount,
                Int32(clamping: plaintext.count - opening.plaintextCount)
            )
            if count > 0 {
                opening.plaintextCount += Int(count)
                // Each read returns a whole record (the buffer has room for one more), so when the
                // input is used up nothing is left to open: skip the read that would say so.
                if input.isEmpty { break reading }
                continue
            }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ:
                break reading
            case SSL_ERROR_ZERO_RETURN:
                opening.endOfInput = true
                break reading
            case let error:
                opening.failure = failureReason(error, during: "record")
                hasFailed = true
                break reading
            }
        }
        take(into: &output)
        return opening
    }

    public func seal(_ plaintext: [UInt8], into send: (UnsafeRawBufferPointer) -> Void) {
        guard isHandshakeComplete else {
            heldPlaintext += plaintext
            return
        }
        withoutActuallyEscaping(send) { send in
            sink = send
            write(plaintext)
            sink = nil
        }
    }

    public func closeNotify(output: inout [UInt8]) {
        guard isHandshakeComplete, !hasFailed else { return }
        OpenSSLErrorQueue.clear()
        _ = SSL_shutdown(ssl)
        take(into: &output)
    }

    // MARK: Inside

    private func finishHandshake() {
        isHandshakeComplete = true
        peerSubject = readPeerSubject()
        if !heldPlaintext.isEmpty {
            let held = heldPlaintext
            heldPlaintext = []
            write(held)
        }
        onHandshakeComplete?(self)
        onHandshakeComplete = nil
    }

    /// Encrypts `plaintext` into `outbound`. The BIO takes every record, so OpenSSL writes it all.
    private func write(_ plaintext: [UInt8]) {
        guard !hasFailed, !plaintext.isEmpty else { return }
        plaintext.withUnsafeBytes { bytes in
            if SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count)) <= 0 { hasFailed = true }
        }
    }

    /// Moves the records written so far to `output`.
    private func take(into output: inout [UInt8]) {
        guard !outbound.isEmpty else { return }
        if output.isEmpty {
            swap(&output, &outbound)
        } else {
            output += outbound
            outbound = []
        }
    }

    /// Why the session failed, for the log: OpenSSL's reasons, the certificate check's verdict, or
    /// the ALPN names the client offered.
    private func failureReason(_ error: Int32, during phase: String) -> String {
        var reasons = OpenSSLErrorQueue.drain()
        let verdict = SSL_get_verify_result(ssl)
        if verdict != X509_V_OK, let text = X509_verify_cert_error_string(verdict) {
            reasons += (reasons.isEmpty ? "" : ": ") + String(cString: text)
        }
        if let refusedProtocols {
            reasons +=
                "; the client offered ALPN \(refusedProtocols.joined(separator: ", ")), not one this listener speaks"
        }
        if reasons.isEmpty {
            reasons = error == SSL_ERROR_SYSCALL ? "the peer broke off the session" : "OpenSSL error \(error)"
        }
        return "TLS \(phase) failed: \(reasons)"
    }

    // MARK: The BIO's side

    /// Appends a record OpenSSL wrote.
    func bioWrite(_ bytes: UnsafeRawBufferPointer) {
        if let sink { return sink(bytes) }
        outbound.append(contentsOf: bytes)
    }

    /// Gives OpenSSL up to `buffer.count` of the bytes read; 0 when they are used up.
    func bioRead(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(buffer.count, input.count)
        guard count > 0 else { return 0 }
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: input[..<count]))
        input = UnsafeRawBufferPointer(rebasing: input[count...])
        return count
    }
}
