import TestSupport
import Testing
import UV
import Wire

/// A client that writes whatever bytes a test gives it and records the server's frames and the close:
/// the hostile peer of the malformed-input tests.
final class RawPeer: ConnectionDelegate {
    private(set) var connection: Connection?
    private var decoder: FrameDecoder
    private(set) var frames: [Frame] = []
    private(set) var decodeError: WireError?
    private(set) var isClosed = false
    private(set) var closeError: UVError?
    var reads = true

    private init(maxFrameSize: Int) {
        decoder = FrameDecoder(maxFrameSize: maxFrameSize, expectsPreface: true)
    }

    /// - Parameter maxFrameSize: the largest frame it takes from the server (announce it too).
    static func connect(
        to endpoint: Endpoint,
        loop: EventLoop,
        maxFrameSize: Int = WireLimits.defaultMaxFrameSize
    ) throws -> RawPeer {
        let peer = RawPeer(maxFrameSize: maxFrameSize)
        var failure: UVError?
        try Connection.connect(to: endpoint, on: loop) { result in
            switch result {
            case .success(let connection):
                peer.connection = connection
                connection.delegate = peer
                try? connection.startReading()
            case .failure(let error):
                failure = error
            }
        }
        loop.run(until: { peer.connection != nil || failure != nil })
        if let failure { throw failure }
        return peer
    }

    /// The preface and a SETTINGS frame, as a well-behaved client starts.
    static func handshake(_ settings: Settings = Settings()) -> [UInt8] {
        var bytes: [UInt8] = []
        FrameEncoder.encode(.preface(Preface()), into: &bytes)
        FrameEncoder.encode(.settings(settings), into: &bytes)
        return bytes
    }

    static func encoded(_ frames: Frame...) -> [UInt8] {
        var bytes: [UInt8] = []
        for frame in frames { FrameEncoder.encode(frame, into: &bytes) }
        return bytes
    }

    func send(_ bytes: [UInt8]) {
        #expect(throws: Never.self) { try connection?.write(bytes) }
    }

    func stopReading() {
        reads = false
        connection?.stopReading()
    }

    func resumeReading() {
        reads = true
        #expect(throws: Never.self) { try connection?.startReading() }
    }

    /// The GOAWAY the server sent, if any.
    var goAway: GoAway? {
        for case .goAway(let goAway) in frames { return goAway }
        return nil
    }

    /// The CALL_END the server sent for `streamID`, if any.
    func callEnd(_ streamID: UInt32) -> CallStatus? {
        for case .callEnd(let id, let status) in frames where id == StreamID(streamID) { return status }
        return nil
    }

    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        decoder.append(bytes)
        do {
            while let frame = try decoder.nextFrame() { frames.append(frame) }
        } catch {
            decodeError = error
        }
    }

    func connectionDidClose(_ connection: Connection, error: UVError?) {
        isClosed = true
        closeError = error
    }

    func close() {
        connection?.close()
    }
}
