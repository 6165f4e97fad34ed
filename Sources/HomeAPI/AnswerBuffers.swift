/// Byte arrays of answers that waited for a commit, kept once written to be encoded into again.
///
/// A commit answers its few hundred writes at once and freed their arrays together, and the next
/// requests allocated theirs one by one: a pattern that defeats malloc's per-thread cache (it keeps
/// 7 blocks of a size), so that half of a store write's allocations went through malloc's slower
/// bins. The store write's answer (``ActionTargetUpdate``) is encoded into one of these instead.
/// Loop thread only.
final class AnswerBuffers {
    /// At most this many are kept, each of at most ``maxKeptCapacity`` bytes: 1 MiB at most.
    static let maxKept = 1_024
    static let maxKeptCapacity = 1_024

    private var spare: [[UInt8]] = []

    /// An empty array, with room if one was given back.
    func take() -> [UInt8] {
        spare.popLast() ?? []
    }

    /// Keeps `bytes`, emptied, unless enough are kept or it is large. Pass it moved (`consume`):
    /// an array shared with another holder would be copied, not emptied.
    func giveBack(_ bytes: consuming [UInt8]) {
        guard spare.count < Self.maxKept, bytes.capacity <= Self.maxKeptCapacity else { return }
        bytes.removeAll(keepingCapacity: true)
        spare.append(bytes)
    }
}
