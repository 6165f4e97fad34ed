import HomeProto
import RPCClient
import SwiftProtobuf
import UV
import Wire

/// The fleet's controller connections: each call goes to the least busy one, or waits (oldest
/// first) when every one has the server's limit of calls in flight; once ``keepsConnected`` is set,
/// a connection that closes is connected again after a growing delay (calls meanwhile go to the
/// others, or fail at once when none is open).
final class FleetControllers {
    /// Below the server's default of 100 concurrent calls per connection.
    static let maxCallsPerConnection = 96

    private let loop: EventLoop
    private let endpoint: Endpoint
    private let configuration: ClientConnection.Configuration
    private let authorization: [MetadataEntry]
    private let retries: RetrySchedule
    private var connections: [ClientConnection] = []
    /// Whether a connection that closes comes back (set once the fleet is set up).
    var keepsConnected = false
    private var isClosed = false
    private(set) var reconnects = 0

    /// Calls waiting for room on a connection, oldest first from `waitingHead`.
    private var waitingCalls: [(method: String, request: [UInt8], completion: (Result<[UInt8], RPCError>) -> Void)] =
        []
    private var waitingHead = 0
    private var isStartingWaitingCalls = false

    init(
        loop: EventLoop,
        endpoint: Endpoint,
        configuration: ClientConnection.Configuration,
        authorization: [MetadataEntry],
        retries: RetrySchedule
    ) {
        self.configuration = configuration
        self.loop = loop
        self.endpoint = endpoint
        self.authorization = authorization
        self.retries = retries
    }

    /// Opens `count` connections; `done` runs once all are open (nil) or with the first failure.
    func connect(_ count: Int, _ done: @escaping ((any Error)?) -> Void) {
        let tally = ConnectionTally(count, done: done)
        for _ in 0..<count {
            do {
                try ClientConnection.connect(to: endpoint, on: loop, configuration: configuration) { [self] result in
                    switch result {
                    case .success(let connection):
                        watch(connection, at: connections.count)
                        connections.append(connection)
                        tally.finished(nil)
                    case .failure(let error):
                        tally.finished(error)
                    }
                }
            } catch {
                tally.finished(error)
            }
        }
    }

    /// Calls `home.v1.HomeService/<method>` (its latency still counts from the caller's intended
    /// start when it waits for room).
    func call<Response: SwiftProtobuf.Message>(
        _ method: String,
        _ request: some SwiftProtobuf.Message,
        _ response: Response.Type,
        _ completion: @escaping (Result<Response, RPCError>) -> Void
    ) {
        let bytes = (try? request.serializedBytes()) ?? []
        let decoded: (Result<[UInt8], RPCError>) -> Void = { result in
            completion(
                result.flatMap { bytes in
                    Result { try Response(serializedBytes: bytes) }.mapError {
                        RPCError(code: .internal, message: "\($0)")
                    }
                }
            )
        }
        waitingCalls.append(("home.v1.HomeService/" + method, bytes, decoded))
        startWaitingCalls()
    }

    /// The server's resident memory and CPU time so far (`home.v1.ServerInfo/Get`), on the first
    /// connection, without waiting for room.
    func serverUsage(_ done: @escaping (Home_V1_ServerInfoResponse?) -> Void) {
        guard let connection = connections.first else { return done(nil) }
        connection.unary("home.v1.ServerInfo/Get", request: [], metadata: authorization) { result in
            guard case .success(let bytes) = result else { return done(nil) }
            done(try? Home_V1_ServerInfoResponse(serializedBytes: bytes))
        }
    }

    private func startWaitingCalls() {
        // A call that cannot start fails before `unary` returns and its completion comes back here:
        // the loop below goes on with the next one instead of recursing once per waiting call (the
        // stack ran out when the server went away with thousands waiting).
        guard !isStartingWaitingCalls else { return }
        isStartingWaitingCalls = true
        defer {
            isStartingWaitingCalls = false
            // Forget what was sent once it is most of the array.
            if waitingHead > 1024 && waitingHead * 2 > waitingCalls.count {
                waitingCalls.removeFirst(waitingHead)
                waitingHead = 0
            }
        }
        while waitingHead < waitingCalls.count {
            let connection: ClientConnection
            if let least = connections.lazy.filter(\.isOpen).min(by: { $0.callsInFlight < $1.callsInFlight }) {
                guard least.callsInFlight < Self.maxCallsPerConnection else { return }
                connection = least
            } else if let closed = connections.first {
                // No connection can take calls (the server went away): each waiting call fails at once.
                connection = closed
            } else {
                return
            }
            let next = waitingCalls[waitingHead]
            waitingHead += 1
            connection.unary(next.method, request: next.request, metadata: authorization) { [self] result in
                next.completion(result)
                startWaitingCalls()
            }
        }
    }

    private func watch(_ connection: ClientConnection, at index: Int) {
        connection.onClose = { [weak self] _ in
            guard let self, keepsConnected, !isClosed else { return }
            reconnect(at: index, attempt: 0)
        }
    }

    private func reconnect(at index: Int, attempt: Int) {
        retries.retry(attempt: attempt) { [weak self] in
            guard let self, !isClosed else { return }
            do {
                try ClientConnection.connect(to: endpoint, on: loop, configuration: configuration) { [self] result in
                    guard !isClosed else {
                        if case .success(let connection) = result { connection.close() }
                        return
                    }
                    guard case .success(let connection) = result else {
                        return reconnect(at: index, attempt: attempt + 1)
                    }
                    reconnects += 1
                    watch(connection, at: index)
                    connections[index] = connection
                    startWaitingCalls()
                }
            } catch {
                reconnect(at: index, attempt: attempt + 1)
            }
        }
    }

    func close() {
        isClosed = true
        for connection in connections { connection.close() }
    }
}
