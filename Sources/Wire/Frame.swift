/// One unit of the protocol, decoded. See ``FrameHeader`` for the header every frame carries and
/// docs/PROTOCOL.md for the byte layout of each payload.
public enum Frame: Hashable, Sendable {
    /// The connection preface; not a frame on the wire, but the decoder yields it first.
    case preface(Preface)
    /// `SETTINGS` (stream 0): `(id u16 | value u32)*`.
    case settings(Settings)
    /// `CALL_START`: `method length u16 | method | timeout ms u32 | entry count u16 |
    /// (key length u8 | key | value length u16 | value)*`.
    case callStart(StreamID, CallStart)
    /// `MESSAGE`: the payload is one protobuf message; flag `END_STREAM` marks the sender's last.
    case message(StreamID, payload: [UInt8], endStream: Bool)
    /// `CALL_END`: `code u16 | message length u16 | message | details (rest)`; flag `RETRYABLE`.
    case callEnd(StreamID, CallStatus)
    /// `CANCEL`: empty payload.
    case cancel(StreamID)
    /// `CREDIT`: `increment u32`, at least 1.
    case credit(StreamID, increment: UInt32)
    /// `PING` (stream 0): 8 opaque bytes, echoed by the pong.
    case ping(UInt64)
    /// `PONG` (stream 0): the 8 bytes of the ping it answers.
    case pong(UInt64)
    /// `GOAWAY` (stream 0): `last stream id u32 | code u16 | message (rest, UTF-8)`.
    case goAway(GoAway)

    /// The stream the frame belongs to (``StreamID/connection`` for connection frames and the preface).
    public var streamID: StreamID {
        switch self {
        case .callStart(let id, _), .message(let id, _, _), .callEnd(let id, _), .cancel(let id), .credit(let id, _):
            id
        case .preface, .settings, .ping, .pong, .goAway:
            .connection
        }
    }
}

/// The opening of a call.
public struct CallStart: Hashable, Sendable {
    /// Full method name, `package.Service/Method`.
    public var method: String
    /// Relative deadline in milliseconds, counted from when the server reads the frame; 0 means none.
    public var timeoutMilliseconds: UInt32
    /// Key/value pairs in the order sent; keys may repeat. Well-known keys are in docs/PROTOCOL.md.
    public var metadata: [MetadataEntry]
    /// Received only: as ``CallStartOptions/exceedsMetadataLimit``.
    public var exceedsMetadataLimit = false

    public init(method: String, timeoutMilliseconds: UInt32 = 0, metadata: [MetadataEntry] = []) {
        self.method = method
        self.timeoutMilliseconds = timeoutMilliseconds
        self.metadata = metadata
    }

    /// A CALL_START of `method` with `options`.
    public init(method: String, _ options: CallStartOptions) {
        self.init(method: method, timeoutMilliseconds: options.timeoutMilliseconds, metadata: options.metadata)
        exceedsMetadataLimit = options.exceedsMetadataLimit
    }

    /// Everything but the method.
    public var options: CallStartOptions {
        CallStartOptions(
            timeoutMilliseconds: timeoutMilliseconds,
            metadata: metadata,
            exceedsMetadataLimit: exceedsMetadataLimit
        )
    }
}

/// What a CALL_START carries besides its method, for a server that takes the method from the
/// decoder (``FrameDecoder/takeCallOptions(_:)``) and so copies no name for a call that repeats it.
public struct CallStartOptions: Hashable, Sendable {
    /// Relative deadline in milliseconds, counted from when the server reads the frame; 0 means none.
    public var timeoutMilliseconds: UInt32
    /// Key/value pairs in the order sent; keys may repeat.
    public var metadata: [MetadataEntry]
    /// Set by the decoder when the frame carried more than ``WireLimits/maxMetadataSize``:
    /// ``metadata`` then holds only the entries within it, and a server refuses the call.
    public var exceedsMetadataLimit: Bool

    public init(timeoutMilliseconds: UInt32 = 0, metadata: [MetadataEntry] = [], exceedsMetadataLimit: Bool = false) {
        self.timeoutMilliseconds = timeoutMilliseconds
        self.metadata = metadata
        self.exceedsMetadataLimit = exceedsMetadataLimit
    }

    /// What `metadata` counts towards ``WireLimits/maxMetadataSize``.
    public static func metadataSize(keyLength: Int, valueLength: Int) -> Int {
        keyLength + valueLength + WireLimits.metadataEntryOverhead
    }

    /// What all of `metadata` counts towards ``WireLimits/maxMetadataSize``.
    public var metadataSize: Int {
        metadata.reduce(0) { $0 + Self.metadataSize(keyLength: $1.key.utf8.count, valueLength: $1.value.count) }
    }
}

/// One metadata pair of a call: a UTF-8 key (at most 255 bytes) and opaque bytes (at most 65,535).
public struct MetadataEntry: Hashable, Sendable {
    public var key: String
    public var value: [UInt8]

    public init(key: String, value: [UInt8]) {
        self.key = key
        self.value = value
    }

    public init(key: String, value: String) {
        self.init(key: key, value: Array(value.utf8))
    }
}

/// How a call ended.
public struct CallStatus: Hashable, Sendable {
    public var code: StatusCode
    /// For people; at most ``WireLimits/maxStatusMessageLength`` UTF-8 bytes are sent.
    public var message: String
    /// For programs: opaque bytes (the RPC layer puts a protobuf `home.v1.ErrorDetails` here).
    public var details: [UInt8]
    /// The call had no effect and may be retried (set when refusing calls during drain).
    public var isRetryable: Bool

    public init(code: StatusCode, message: String = "", details: [UInt8] = [], isRetryable: Bool = false) {
        self.code = code
        self.message = message
        self.details = details
        self.isRetryable = isRetryable
    }

    public static let ok = CallStatus(code: .ok)

    /// The longest status message a server sends: a message may quote client input (an unknown
    /// method's name), which must not come back at any length.
    public static let maxServerMessageBytes = 1024

    /// This status as it may travel in a CALL_END to a peer that accepts frames of at most
    /// `maxFrameSize` bytes: the message cut (at a character boundary) to
    /// ``maxServerMessageBytes`` and to what fits, and the details dropped if they cannot fit.
    public func fitted(toFrameSize maxFrameSize: Int) -> CallStatus {
        // Code (2 bytes) and message length (2 bytes) come before the message and the details.
        if message.isEmpty && details.isEmpty { return self }
        var fitted = self
        if 4 + details.count > maxFrameSize { fitted.details = [] }
        let room = min(Self.maxServerMessageBytes, maxFrameSize - 4 - fitted.details.count)
        if message.utf8.count > room {
            fitted.message = String(decoding: FrameEncoder.clippedUTF8(message, to: room), as: UTF8.self)
        }
        return fitted
    }
}

/// The sender's notice that it is closing the connection.
public struct GoAway: Hashable, Sendable {
    /// The highest stream id the sender accepted; calls above it were not processed and may be retried.
    public var lastStreamID: StreamID
    /// Why: ``StatusCode/ok`` for a graceful drain, another code for a protocol or resource error.
    public var code: StatusCode
    public var message: String

    public init(lastStreamID: StreamID, code: StatusCode, message: String = "") {
        self.lastStreamID = lastStreamID
        self.code = code
        self.message = message
    }
}
