/// An array that grows at the back and drops from the front, for queues and retention windows
/// (pending callbacks, a home's change log, stored event rows). Dropped elements are skipped by an
/// index and compacted away once they are the larger half, so dropping costs O(1) amortised, where
/// `Array.removeFirst` shifts everything each time. Storage that a burst grew (a start-up that marks
/// 100,000 accessories unreachable queues 100,000 changes) is given back once the burst is dropped.
struct FrontDroppingArray<Element> {
    private var storage: [Element] = []
    private var head = 0

    init() {}

    /// The elements still held, oldest first.
    var elements: ArraySlice<Element> { storage[head...] }
    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }
    var first: Element? { isEmpty ? nil : storage[head] }
    /// Elements the storage has room for without growing.
    var capacity: Int { storage.capacity }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    /// Drops the oldest elements while `predicate` holds for them, and returns them.
    @discardableResult
    mutating func removeFirst(while predicate: (Element) -> Bool) -> ArraySlice<Element> {
        let start = head
        while head < storage.count, predicate(storage[head]) { head += 1 }
        let removed = storage[start..<head]
        if head > 0 && head >= storage.count / 2 {
            if storage.capacity > retainedCapacity(for: count) {
                storage = Array(storage[head...])
            } else {
                storage.removeFirst(head)
            }
            head = 0
        }
        return removed
    }

    /// Drops the `k` oldest elements (fewer if it holds fewer).
    mutating func removeFirst(_ k: Int) {
        var remaining = k
        removeFirst { _ in
            defer { remaining -= 1 }
            return remaining > 0
        }
    }
}

extension FrontDroppingArray: Sendable where Element: Sendable {}
