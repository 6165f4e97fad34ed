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

    /// Bytes held for the peer: output not yet taken by the kernel, input not yet decoded and the
    /// counted metadata of open calls (what the server's ``BufferBudget`` ranks connections by).
    var heldByteCount: Int { unsentByteCount + decoder.bufferedByteCount + countedMetadataByteCount }

    /// Brings the server's ``BufferBudget`` up to date with the input this connection holds.
    func countInputHeld() {
        server.buffers.tally.byteCount += decoder.bufferedByteCount - countedInputByteCount
        countedInputByteCount = decoder.bufferedByteCount
        server.buffers.check(server)
    }

    /// Metadata smaller than this is not counted: an authorization header costs a call nothing,
    /// and uncounted metadata is at most this much per open call.
    private static let countedMetadataSize = 1 << 10

    /// Counts an opening call's metadata of `size` bytes (``CallStartOptions/metadataSize``), held as
    /// long as the call is open: a call may wait for its request, or run for hours (a subscription),
    /// with up to 16 KiB of it.
    func countMetadata(_ size: Int, of call: ServerCall) {
        guard size >= Self.countedMetadataSize else { return }
        call.countedMetadataBytes = size
        countedMetadataByteCount += size
        server.buffers.tally.byteCount += size
        server.buffers.check(server)
    }

    /// The call has ended: its metadata no longer counts.
    func uncountMetadata(of call: ServerCall) {
        countedMetadataByteCount -= call.countedMetadataBytes
        server.buffers.tally.byteCount -= call.countedMetadataBytes
        call.countedMetadataBytes = 0
    }
}
