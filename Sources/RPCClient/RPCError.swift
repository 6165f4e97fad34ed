public import Wire

/// A call that did not succeed: the status the server sent, or one the client made up when the
/// connection failed (UNAVAILABLE), the deadline passed (DEADLINE_EXCEEDED) or the caller cancelled.
public struct RPCError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The status code.
    public var code: StatusCode
    /// The explanation.
    public var message: String
    /// The server's structured details (a protobuf `home.v1.ErrorDetails`), or empty.
    public var details: [UInt8]
    /// The call had no effect and may be retried.
    public var isRetryable: Bool
    /// The connection's TLS failed (a certificate not trusted, a protocol the server does not speak):
    /// connecting again the same way fails the same way.
    public var isSecurityFailure = false

    /// An error with these parts.
    public init(code: StatusCode, message: String, details: [UInt8] = [], isRetryable: Bool = false) {
        self.code = code
        self.message = message
        self.details = details
        self.isRetryable = isRetryable
    }

    /// The error a call's status reports.
    public init(_ status: CallStatus) {
        self.init(code: status.code, message: status.message, details: status.details, isRetryable: status.isRetryable)
    }

    public var description: String { "\(code): \(message)" }
}
