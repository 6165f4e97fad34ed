import UV
import Wire

/// What a connection holds for its peer, and the limits on it: the connection's own (a ceiling of
/// unsent output, a high watermark that pauses reading and streams) and its share of the server's
/// ``BufferBudget``.
extension ServerConnection {
    /// The unsent-output ceiling is the configured one plus one of the largest frames the peer
    /// accepts (its default until its SETTINGS come, then after each): a whole home is one answer,
    /// and a client that announced room for it must be able to receive it on a connection whose
    /// output is otherwise within the ceiling (a 9 MB home would pass 8 MiB on its own). So a peer
    /// that stops reading still costs a bounded amount.
    func fitOutputCeilingToPeerFrames() {
        connection.maxPendingWriteBytes = server.configuration.maxPendingWriteBytes + peerMaxFrameSize
    }

    /// Bytes of output not yet taken by the kernel: queued writes and the batch not yet written.
    var unsentByteCount: Int { connection.pendingWriteByteCount + outbound.count }

    /// Room kept under the ceiling of unsent output for CALL_ENDs: a call refused for want of room
    /// must still be able to say so.
    private static let callEndRoom = 64 << 10

    /// Whether an answer of `size` bytes fits under the ceiling of unsent output, with room left for
    /// CALL_ENDs (the ceiling closes the connection when passed).
    func hasRoom(forAnswerOf size: Int) -> Bool {
        unsentByteCount + size + Self.callEndRoom <= connection.maxPendingWriteBytes
    }

    /// Whether more output may be produced now: the unsent bytes are under the high watermark.
    var isWritable: Bool {
        closing == nil && unsentByteCount < server.configuration.outboundHighWatermark
    }

    /// Bytes held for the peer: output not yet taken by the kernel and input not yet decoded (what
    /// the server's ``BufferBudget`` ranks connections by).
    var heldByteCount: Int { unsentByteCount + decoder.bufferedByteCount }
}
