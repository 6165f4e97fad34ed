/// A layer between a ``Connection``'s socket and its delegate that changes the bytes both ways: TLS
/// (the `TLS` module's sessions). The connection hands it what the socket read and writes what it
/// returns, so the delegate reads and writes plaintext and never sees a record.
///
/// All on the loop thread, one call at a time.
public protocol ConnectionSecurity: AnyObject {
    /// Starts the handshake: a client's first flight goes to `output`.
    func start(output: inout [UInt8])
    /// Takes bytes the socket read: their plaintext goes to `plaintext` (with room for
    /// ``plaintextCapacity(forReading:)`` bytes) and what must be sent back (handshake messages,
    /// alerts) is appended to `output`.
    func open(
        _ bytes: UnsafeRawBufferPointer,
        into plaintext: UnsafeMutableRawBufferPointer,
        output: inout [UInt8]
    ) -> SecurityOpening
    /// The room ``open(_:into:output:)`` needs for the plaintext of `count` bytes read.
    func plaintextCapacity(forReading count: Int) -> Int
    /// Gives `send` the records that carry `plaintext` to the peer, in order, as they are made
    /// (held until the handshake ends). The records are lent for the call only.
    func seal(_ plaintext: [UInt8], into send: (UnsafeRawBufferPointer) -> Void)
    /// Appends to `output` the message that ends the session cleanly (TLS's close_notify).
    func closeNotify(output: inout [UInt8])
}

/// What ``ConnectionSecurity/open(_:into:output:)`` made of the bytes read.
public struct SecurityOpening {
    /// Plaintext bytes written at the start of the buffer.
    public var plaintextCount: Int
    /// The peer ended the session cleanly.
    public var endOfInput: Bool
    /// The session failed and cannot go on (the reason, for logs): the connection closes once
    /// `output` (an alert, usually) is written.
    public var failure: String?

    public init(plaintextCount: Int, endOfInput: Bool = false, failure: String? = nil) {
        self.plaintextCount = plaintextCount
        self.endOfInput = endOfInput
        self.failure = failure
    }
}
