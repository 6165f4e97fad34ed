import CLibSSL

/// A TLS failure: a context that could not be built (a missing or mismatched certificate or key), or
/// a session's handshake or record error, with OpenSSL's reason.
public struct TLSError: Error, Sendable, CustomStringConvertible {
    public let message: String

    init(_ message: String) {
        self.message = message
    }

    /// `what`, followed by the reasons on OpenSSL's error queue for this thread (which it empties).
    static func fromQueue(_ what: String) -> TLSError {
        let reasons = OpenSSLErrorQueue.drain()
        return TLSError(reasons.isEmpty ? what : "\(what): \(reasons)")
    }

    public var description: String { message }
}

/// OpenSSL's per-thread queue of errors.
enum OpenSSLErrorQueue {
    /// The queued reasons, oldest first, as "reason; reason", emptying the queue.
    static func drain() -> String {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            reasons.append(reason(code))
        }
        return reasons.joined(separator: "; ")
    }

    /// One error's reason, e.g. "wrong version number" (the library and function parts left out).
    private static func reason(_ code: UInt) -> String {
        if let text = ERR_reason_error_string(code) { return String(cString: text) }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func clear() { ERR_clear_error() }
}
