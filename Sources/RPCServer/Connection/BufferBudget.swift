import UV

/// What all of a server's connections together hold for their peers: input not yet decoded (up to
/// a frame each), output the kernel has not taken (up to 8 MiB plus a frame of the client's size
/// each), and the metadata of open calls (up to 16 KiB each, 100 calls a connection; counted from
/// 1 KiB). A connection's own limits bound one peer; times 16,384 connections they bound nothing a
/// real machine has, and most of it is reachable before a peer authenticates. This bounds the sum
/// (``ServerConfiguration/maxBufferedBytes``):
///
/// - a large answer (over 16 KiB) that would pass it is refused with RESOURCE_EXHAUSTED, as one that
///   would pass its connection's ceiling is;
/// - past it, the connections holding the most are closed, largest first, until the rest fit, as
///   Redis 7 evicts clients past `maxmemory-clients`: a peer that reads its answers holds little and
///   is not the one closed.
///
/// Loop thread only.
final class BufferBudget {
    let limit: Int
    /// Queued output, kept by the UV layer (each connection's ``Connection/pendingWriteTally``);
    /// undecoded input, reported by each connection after each read; open calls' metadata.
    let tally = ByteTally()
    private var isEvictionScheduled = false

    init(limit: Int) {
        self.limit = limit
    }

    var heldByteCount: Int { tally.byteCount }

    func hasRoom(forAnswerOf size: Int) -> Bool {
        tally.byteCount + size <= limit
    }

    /// Called where a connection's buffers grow: past the limit, schedules an eviction for `server`'s
    /// next moment before polling (not now: the connection that grew may be mid-read, and may be the
    /// one closed).
    func check(_ server: RPCServer) {
        guard tally.byteCount > limit, !isEvictionScheduled else { return }
        isEvictionScheduled = true
        server.runBeforePolling { [unowned server] in server.evictLargestBufferHolders() }
    }

    /// Closes the largest holders among `connections` until the rest fit under the limit.
    func evictLargest(among connections: some Sequence<any ServedConnection>) {
        isEvictionScheduled = false
        var excess = tally.byteCount - limit
        var candidates: [(connection: any ServedConnection, held: Int)] = []
        for connection in connections {
            // A connection already closing gives its queued output back when libuv cancels it.
            if connection.connection.state == .open {
                candidates.append((connection, connection.heldByteCount))
            } else {
                excess -= connection.heldByteCount
            }
        }
        guard excess > 0 else { return }
        candidates.sort { $0.held > $1.held }
        // A connection that holds nothing is never closed for the budget, whatever the count says.
        for candidate in candidates {
            guard excess > 0, candidate.held > 0 else { break }
            excess -= candidate.held
            candidate.connection.evict()
        }
    }
}
