import CLibUV

/// The memory of one queued write: one allocation holding the libuv request, the byte count and the
/// bytes. It is created by ``make(copying:)`` and freed only by ``free(_:)`` in the write callback,
/// because libuv reads the bytes until then (libuv docs: "the memory pointed to by the buffers must
/// remain valid until the callback gets called").
///
/// Layout: `| uv_write_t | byte count (Int) | padding to 16 | bytes |`.
enum WriteRequest {
    private static let countOffset = MemoryLayout<uv_write_t>.stride
    private static let bytesOffset = (countOffset + MemoryLayout<Int>.size + 15) & ~15

    static func make(copying bytes: UnsafeRawBufferPointer) -> UnsafeMutablePointer<uv_write_t> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytesOffset + bytes.count, alignment: 16)
        raw.storeBytes(of: bytes.count, toByteOffset: countOffset, as: Int.self)
        (raw + bytesOffset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        return raw.bindMemory(to: uv_write_t.self, capacity: 1)
    }

    static func bytes(of request: UnsafeMutablePointer<uv_write_t>) -> UnsafeMutablePointer<CChar> {
        (UnsafeMutableRawPointer(request) + bytesOffset).assumingMemoryBound(to: CChar.self)
    }

    static func byteCount(of request: UnsafeMutablePointer<uv_write_t>) -> Int {
        UnsafeMutableRawPointer(request).load(fromByteOffset: countOffset, as: Int.self)
    }

    static func free(_ request: UnsafeMutablePointer<uv_write_t>) {
        UnsafeMutableRawPointer(request).deallocate()
    }
}

/// An outbound connect in flight: the libuv request plus, in its `data`, a retained box with the
/// connection and the completion to call. Both are freed when the connect callback runs.
enum ConnectRequest {
    final class Context {
        let connection: Connection
        let completion: (Result<Connection, UVError>) -> Void

        init(connection: Connection, completion: @escaping (Result<Connection, UVError>) -> Void) {
            self.connection = connection
            self.completion = completion
        }
    }

    static func make(
        connection: Connection,
        completion: @escaping (Result<Connection, UVError>) -> Void
    ) -> UnsafeMutablePointer<uv_connect_t> {
        let request = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        let context = Context(connection: connection, completion: completion)
        request.pointee.data = UnsafeMutableRawPointer(Unmanaged.passRetained(context).toOpaque())
        return request
    }

    /// Frees a request libuv never accepted, without reporting anything.
    static func discard(_ request: UnsafeMutablePointer<uv_connect_t>) {
        Unmanaged<Context>.fromOpaque(request.pointee.data).release()
        request.deallocate()
    }

    /// Frees the request and reports the outcome; on failure the connection is closed first.
    static func complete(_ request: UnsafeMutablePointer<uv_connect_t>, status: Int32) {
        let context = Unmanaged<Context>.fromOpaque(request.pointee.data).takeRetainedValue()
        request.deallocate()
        let connection = context.connection
        if status < 0 {
            let error = UVError(code: status)
            connection.close(error: error)
            context.completion(.failure(error))
        } else {
            connection.disableNagle()
            context.completion(.success(connection))
        }
    }
}

/// The path names of a Unix-domain socket.
enum PipeName {
    static func local(of pipe: UnsafeMutablePointer<uv_pipe_t>) throws(UVError) -> String {
        try read { uv_pipe_getsockname(pipe, $0, $1) }
    }

    static func peer(of pipe: UnsafeMutablePointer<uv_pipe_t>) throws(UVError) -> String {
        try read { uv_pipe_getpeername(pipe, $0, $1) }
    }

    private static func read(
        _ fill: (UnsafeMutablePointer<CChar>, UnsafeMutablePointer<Int>) -> Int32
    ) throws(UVError) -> String {
        var name = [CChar](repeating: 0, count: 4096)
        var length = name.count
        try uvCheck(fill(&name, &length))
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
