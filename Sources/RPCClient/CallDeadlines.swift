import UV
import Wire

/// A connection's call deadlines on one loop timer: a min-heap of (expiry, stream) that is set again
/// only when the earliest expiry moves earlier, as the server keeps its calls' (RPCServer's
/// `CallTimers`).
///
/// The SDK sends a deadline with every call; a libuv timer of its own per call (initialised,
/// started, stopped and closed) was about an eighth of a simulated accessory's work per answered
/// command. Here a call that ends leaves its entry behind, found stale when it comes up; the heap is
/// rebuilt from the calls still open once stale entries are most of it, so it stays within twice
/// the calls in flight.
final class CallDeadlines {
    private struct Entry {
        let expiry: UInt64
        let streamID: StreamID
    }

    private let loop: EventLoop
    private var timer: LoopTimer?
    /// Ordered by expiry: each entry's is at most its children's.
    private var heap: [Entry] = []
    /// The loop time the timer is set for (`UInt64.max`: not set).
    private var armedFor = UInt64.max
    /// Whether a call is still in flight.
    private let isOpen: (StreamID) -> Bool
    /// Ends a call whose deadline passed.
    private let expire: (StreamID) -> Void

    init(loop: EventLoop, isOpen: @escaping (StreamID) -> Bool, expire: @escaping (StreamID) -> Void) {
        self.loop = loop
        self.isOpen = isOpen
        self.expire = expire
    }

    /// Ends `streamID` at loop time `expiry` unless it has ended by then. `openCalls`: how many calls
    /// are in flight now.
    func add(_ streamID: StreamID, at expiry: UInt64, openCalls: Int) {
        if heap.count >= 2 * openCalls + 64 { dropEnded() }
        heap.append(Entry(expiry: expiry, streamID: streamID))
        siftUp(heap.count - 1)
        if expiry < armedFor { arm(for: expiry) }
    }

    func close() {
        heap = []
        timer?.close()
        timer = nil
    }

    private func arm(for expiry: UInt64) {
        armedFor = expiry
        let now = loop.now
        let timer = self.timer ?? LoopTimer(loop: loop)
        self.timer = timer
        timer.start(after: .milliseconds(expiry > now ? expiry - now : 0)) { [unowned self] in fire() }
    }

    private func fire() {
        armedFor = .max
        let now = loop.now
        while let first = heap.first, first.expiry <= now {
            removeFirst()
            if isOpen(first.streamID) { expire(first.streamID) }
        }
        if let first = heap.first { arm(for: first.expiry) }
    }

    /// Keeps the entries of calls still open; a sorted array is a heap.
    private func dropEnded() {
        heap = heap.filter { isOpen($0.streamID) }
        heap.sort { $0.expiry < $1.expiry }
    }

    private func removeFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var slot = 0
        while true {
            let left = 2 * slot + 1
            guard left < heap.count else { break }
            let right = left + 1
            let child = right < heap.count && heap[right].expiry < heap[left].expiry ? right : left
            guard heap[child].expiry < last.expiry else { break }
            heap[slot] = heap[child]
            slot = child
        }
        heap[slot] = last
    }

    private func siftUp(_ start: Int) {
        var slot = start
        let entry = heap[slot]
        while slot > 0 {
            let parent = (slot - 1) / 2
            guard entry.expiry < heap[parent].expiry else { break }
            heap[slot] = heap[parent]
            slot = parent
        }
        heap[slot] = entry
    }
}
