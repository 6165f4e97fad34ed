/// What a ``HomeClient``'s connection is doing, as ``HomeClient/connectionStates()`` reports it.
/// The client connects on demand, so a drop is seen when a call or a change stream meets it.
public enum ConnectionState: Sendable, Equatable {
    /// No connection: none was needed yet, or the client was closed.
    case idle
    /// Connecting (the TCP or Unix connect and the protocol's handshake).
    case connecting
    /// Connected: calls go out on the connection.
    case connected
    /// The connection failed or dropped, with why; the next call or stream connects again.
    case disconnected(reason: String)
}
