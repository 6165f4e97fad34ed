import CLibSSL

/// The BIO every session reads and writes its records through: nothing but memory. Reads take the
/// bytes the connection's socket read (lent for the duration of one ``TLSSession/open``) and
/// writes go to the session (straight on to the socket during a seal), so OpenSSL never touches a
/// socket itself and no bytes are copied into an intermediate BIO buffer (a `BIO_s_mem` pair would copy each record once more and
/// keep its grown buffer for the life of an idle connection).
enum MemoryBIO {
    /// The method table, registered once per process.
    nonisolated(unsafe) static let method: OpaquePointer = {
        let type = BIO_get_new_index() | BIO_TYPE_SOURCE_SINK
        guard let method = BIO_meth_new(type, "homerpc memory") else { fatalError("BIO_meth_new failed") }
        BIO_meth_set_write(method, write)
        BIO_meth_set_read(method, read)
        BIO_meth_set_ctrl(method, control)
        BIO_meth_set_create(method, create)
        return method
    }()

    /// A BIO that reads and writes for `session` (held unretained: the session owns the BIO through
    /// its SSL object, and OpenSSL calls it only from inside the session's own calls).
    static func make(for session: TLSSession) -> OpaquePointer {
        guard let bio = BIO_new(method) else { fatalError("BIO_new failed: out of memory") }
        BIO_set_data(bio, Unmanaged.passUnretained(session).toOpaque())
        return bio
    }

    private static func session(of bio: OpaquePointer?) -> TLSSession {
        Unmanaged<TLSSession>.fromOpaque(BIO_get_data(bio)!).takeUnretainedValue()
    }

    private static let create: @convention(c) (OpaquePointer?) -> Int32 = { bio in
        BIO_set_init(bio, 1)
        return 1
    }

    private static let write: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
        bio,
        bytes,
        count in
        homerpc_BIO_clear_retry_flags(bio)
        guard let bytes, count > 0 else { return 0 }
        session(of: bio).bioWrite(UnsafeRawBufferPointer(start: bytes, count: Int(count)))
        return count
    }

    private static let read: @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int32) -> Int32 = {
        bio,
        buffer,
        capacity in
        homerpc_BIO_clear_retry_flags(bio)
        guard let buffer, capacity > 0 else { return 0 }
        let count = session(of: bio).bioRead(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(capacity)))
        guard count > 0 else {
            // Nothing left of this read: OpenSSL keeps a partial record and asks again next time.
            homerpc_BIO_set_retry_read(bio)
            return -1
        }
        return Int32(count)
    }

    private static let control: @convention(c) (OpaquePointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int = {
        _,
        command,
        _,
        _ in
        // Writes go straight to the session: a flush has nothing to do. Everything else is unsupported.
        command == BIO_CTRL_FLUSH ? 1 : 0
    }
}
