public import Wire

/// Why the server closed (or is closing) a connection; logged, counted, and sent in the GOAWAY when
/// the peer can still read one.
public enum CloseReason: Hashable, Sendable, CustomStringConvertible {
    /// The peer's bytes broke the framing.
    case protocolError(WireError)
    /// Well-formed frames in an order or combination the protocol forbids.
    case protocolViolation(String)
    /// The preface and SETTINGS did not arrive in time.
    case handshakeTimeout
    /// The peer did not answer a keepalive PING in time.
    case keepaliveTimeout
    /// No call for longer than the idle timeout.
    case idleTimeout
    /// A graceful drain finished (or its grace period ran out).
    case drained
    /// The server already has its maximum number of connections.
    case tooManyConnections
    /// The peer does not read and the outbound buffer hit its cap.
    case outboundBufferFull
    /// All connections together held more than the server's buffer budget, and this one held the most.
    case bufferBudgetExceeded
    /// The peer closed the connection or sent GOAWAY and finished its calls.
    case peerClosed

    /// The status code a GOAWAY carries for this reason.
    public var statusCode: StatusCode {
        switch self {
        case .protocolError(.frameTooLarge): .resourceExhausted
        case .protocolError, .protocolViolation: .invalidArgument
        case .handshakeTimeout, .keepaliveTimeout: .deadlineExceeded
        case .idleTimeout, .drained, .peerClosed: .ok
        case .tooManyConnections, .outboundBufferFull, .bufferBudgetExceeded: .resourceExhausted
        }
    }

    /// The GOAWAY that announces this reason, naming the last stream the server accepted.
    func goAway(lastStreamID: StreamID) -> GoAway {
        GoAway(lastStreamID: lastStreamID, code: statusCode, message: description)
    }

    public var description: String {
        switch self {
        case .protocolError(let error): "protocol error: \(error)"
        case .protocolViolation(let message): "protocol violation: \(message)"
        case .handshakeTimeout: "handshake timeout"
        case .keepaliveTimeout: "keepalive timeout: no PONG"
        case .idleTimeout: "idle timeout"
        case .drained: "server is draining"
        case .tooManyConnections: "too many connections"
        case .outboundBufferFull: "outbound buffer full: the peer does not read"
        case .bufferBudgetExceeded: "the server's buffers are over budget and this connection held the most"
        case .peerClosed: "peer closed"
        }
    }
}
