import Wire

/// Limits and timeouts of an ``RPCServer``. The defaults suit a production server; tests shorten
/// the timeouts.
public struct ServerConfiguration: Sendable {
    /// Largest frame payload accepted (announced in SETTINGS).
    public var maxFrameSize = WireLimits.defaultMaxFrameSize
    /// Open connections beyond which new ones get a GOAWAY (RESOURCE_EXHAUSTED) and are closed.
    public var maxConnections = 10_000
    /// Hard cap on a connection's unsent bytes, beyond one frame of the peer's MAX_FRAME_SIZE (room for
    /// one whole answer of the largest size it accepts); exceeding it closes the connection.
    public var maxPendingWriteBytes = 8 << 20
    /// Most bytes all connections together may hold for their peers (input not yet decoded, output
    /// not yet taken by the kernel, open calls' metadata): a large answer that would pass it is refused, and past it the
    /// connections holding the most are closed (``BufferBudget``).
    public var maxBufferedBytes = 1 << 30
    /// Above this many unsent bytes a connection stops reading and streams stop being writable.
    public var outboundHighWatermark = 1 << 20
    /// How often connection timeouts are checked, in milliseconds.
    public var timerResolutionMilliseconds: UInt64 = 100
    /// How long a closing connection may take to deliver its GOAWAY before it is cut.
    public var closeGracePeriodMilliseconds: UInt64 = 2_000
    /// How long a call may wait for its request message after CALL_START (its deadline, if sooner,
    /// applies instead): a peer cannot hold calls open by never sending their requests.
    public var requestTimeoutMilliseconds: UInt64 = 10_000
    /// Methods a connection may call before it authenticates (health checks for probes); they run
    /// without a principal and do not authenticate the connection.
    public var unauthenticatedMethods: Set<String> = []
    /// The protobuf message (full name) a failed call's ``CallStatus/details`` hold: the gRPC door
    /// wraps them in a `google.protobuf.Any` of this type inside `grpc-status-details-bin`.
    public var statusDetailsType = "google.protobuf.Empty"
    /// Per-connection protocol limits and timeouts.
    public var connection = ConnectionConfiguration()

    public init() {}

    /// What the server announces in its SETTINGS frame.
    var announcedSettings: Settings {
        Settings([
            Setting(.maxFrameSize, UInt32(maxFrameSize)),
            Setting(.maxConcurrentStreams, UInt32(connection.maxConcurrentStreams)),
            // Calls carry one request message; clients never stream to the server.
            Setting(.initialStreamCredit, 1),
        ])
    }
}
