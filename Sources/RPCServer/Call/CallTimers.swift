import UV

/// Every open call's one pending expiry (its deadline, or the wait for its request message), kept in
/// a min-heap on one loop timer for the whole server, as nginx and Netty keep theirs.
///
/// A timer of its own per call (a libuv handle initialised, started, stopped and closed) cost about
/// 3,300 instructions, 29% of a durable write's work on the loop, for calls that nearly all end long
/// before their deadline. Here a call is a heap entry: added in O(log n), removed in O(log n) when
/// it ends (it knows its slot), and the one timer is set again only when the earliest expiry moves
/// earlier. Calls of equal timeouts arrive in expiry order, so an addition usually stays a leaf.
final class CallTimers {
    /// Why a call's timer runs, and so what its expiry ends it with.
    enum Reason {
        case deadline
        case deadlineBeforeRequest
        case requestTimeout(milliseconds: UInt64)

        var message: String {
            switch self {
            case .deadline: "deadline exceeded"
            case .deadlineBeforeRequest: "deadline exceeded before the request arrived"
            case .requestTimeout(let milliseconds):
                "the request message did not arrive within \(milliseconds) ms"
            }
        }
    }

    private let loop: EventLoop
    private let timer: LoopTimer
    /// Ordered by ``ServerCall/timerExpiry``: each entry's is at most its children's.
    private var heap: [ServerCall] = []
    /// The loop time the timer is set for (`UInt64.max`: not set).
    private var armedFor = UInt64.max
    /// Ends a call whose expiry passed (its connection fails it with DEADLINE_EXCEEDED).
    private let expire: (ServerCall) -> Void

    init(loop: EventLoop, expire: @escaping (ServerCall) -> Void) {
        self.loop = loop
        timer = LoopTimer(loop: loop)
        self.expire = expire
    }

    var count: Int { heap.count }

    /// Gives `call` (which has no pending expiry) one at loop time `expiry`.
    func add(_ call: ServerCall, at expiry: UInt64, _ reason: Reason) {
        precondition(call.timerSlot < 0, "a call has one pending expiry")
        call.timerExpiry = expiry
        call.timerReason = reason
        call.timerSlot = heap.count
        heap.append(call)
        siftUp(heap.count - 1)
        if expiry < armedFor { arm(for: expiry) }
    }

    /// Drops `call`'s pending expiry, if it has one. The timer is left set: if it was for this call,
    /// it finds nothing due and is set for the next.
    func remove(_ call: ServerCall) {
        let slot = call.timerSlot
        guard slot >= 0 else { return }
        call.timerSlot = -1
        let last = heap.removeLast()
        guard slot < heap.count else { return }
        heap[slot] = last
        last.timerSlot = slot
        if slot > 0 && last.timerExpiry < heap[(slot - 1) / 2].timerExpiry {
            siftUp(slot)
        } else {
            siftDown(slot)
        }
    }

    func close() {
        for call in heap { call.timerSlot = -1 }
        heap = []
        timer.close()
    }

    private func arm(for expiry: UInt64) {
        armedFor = expiry
        let now = loop.now
        timer.start(after: .milliseconds(expiry > now ? expiry - now : 0)) { [unowned self] in fire() }
    }

    private func fire() {
        armedFor = .max
        let now = loop.now
        while let first = heap.first, first.timerExpiry <= now {
            remove(first)
            expire(first)
        }
        if let first = heap.first { arm(for: first.timerExpiry) }
    }

    private func siftUp(_ start: Int) {
        var slot = start
        let call = heap[slot]
        while slot > 0 {
            let parent = (slot - 1) / 2
            guard call.timerExpiry < heap[parent].timerExpiry else { break }
            heap[slot] = heap[parent]
            heap[slot].timerSlot = slot
            slot = parent
        }
        heap[slot] = call
        call.timerSlot = slot
    }

    private func siftDown(_ start: Int) {
        var slot = start
        let call = heap[slot]
        let count = heap.count
        while true {
            let left = 2 * slot + 1
            guard left < count else { break }
            let right = left + 1
            let child = right < count && heap[right].timerExpiry < heap[left].timerExpiry ? right : left
            guard heap[child].timerExpiry < call.timerExpiry else { break }
            heap[slot] = heap[child]
            heap[slot].timerSlot = slot
            slot = child
        }
        heap[slot] = call
        call.timerSlot = slot
    }
}
