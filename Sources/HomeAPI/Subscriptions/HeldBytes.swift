import HomeService
import Wire

/// The bytes subscriptions hold, per connection and in all, against their bounds: what waits unread
/// (``PendingEvents/heldBytes``) and the characteristics they name. A request of a few bytes asks
/// for a whole home, or for every value of thousands of characteristics, and a stream without
/// credit keeps what it gets: the stream that passes either bound ends.
struct HeldBytes {
    /// What one connection's streams hold, shared by them, kept as it changes so that bounding it
    /// costs no sum over the streams.
    final class Connection {
        fileprivate(set) var bytes = 0
        fileprivate var streams = 0
    }

    let perConnection: Int
    let inAll: Int
    /// What all streams hold.
    private(set) var held = 0
    private var connections: [SessionID: Connection] = [:]

    init(perConnection: Int, inAll: Int) {
        self.perConnection = perConnection
        self.inAll = inAll
    }

    /// Counts one more stream of `session`'s connection; returns what that connection holds.
    mutating func open(in session: SessionID) -> Connection {
        let connection = connections[session] ?? Connection()
        connection.streams += 1
        connections[session] = connection
        return connection
    }

    /// One stream of the connection ended (what it held given back already).
    mutating func close(in session: SessionID, _ connection: Connection) {
        connection.streams -= 1
        if connection.streams == 0 { connections[session] = nil }
    }

    /// `bytes` more (or fewer, when negative) held by one stream of `connection`.
    mutating func add(_ bytes: Int, to connection: Connection) {
        connection.bytes += bytes
        held += bytes
    }

    /// Why a stream of `connection` may not go on, if it may not: its connection's streams, or all
    /// streams, hold more than their bound.
    func refusal(for connection: Connection) -> CallStatus? {
        let what = "events and home states waiting unread, and the characteristics the streams name"
        if connection.bytes > perConnection {
            return CallStatus(
                code: .resourceExhausted,
                message: "this connection's subscriptions would hold \(connection.bytes) bytes (the most is "
                    + "\(perConnection)) of \(what): read them, or follow fewer homes and characteristics on one "
                    + "connection"
            )
        }
        if held > inAll {
            return CallStatus(
                code: .resourceExhausted,
                message: "the server's subscriptions would hold \(held) bytes (the most is \(inAll)) of \(what): "
                    + "try again later"
            )
        }
        return nil
    }
}
