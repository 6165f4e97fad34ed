/// A queue that grows at the back and drops from the front, for queues and retention windows
/// (pending callbacks, a home's change log, stored event rows): a ring of slots, so appending and
/// dropping each cost O(1), and a dropped element is released when it is dropped. (It used to skip
/// dropped elements by an index and compact them away once they were the larger half: a home's log
/// at 20,000 changes a second then released 10,000 events at once every half second, a 2–3 ms stall
/// of the event loop.) Storage that a burst grew (a start-up that marks 100,000 accessories
/// unreachable queues 100,000 changes) is given back once the burst is dropped.
struct FrontDroppingArray<Element> {
    /// `count` elements from `head` on, wrapping at the end; every other slot is empty.
    private var slots: [Element?] = []
    private var head = 0
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }
    var first: Element? { isEmpty ? nil : slots[head] }
    var last: Element? { isEmpty ? nil : slots[slotIndex(count - 1)] }
    /// Elements the storage has room for without growing.
    var capacity: Int { slots.count }

    /// The element `offset` places after the oldest.
    subscript(offset: Int) -> Element {
        precondition(offset >= 0 && offset < count, "offset \(offset) outside 0..<\(count)")
        return slots[slotIndex(offset)]!
    }

    /// The elements still held, oldest first.
    var elements: [Element] { elements(droppingFirst: 0) }

    /// The elements still held after the `k` oldest, oldest first.
    func elements(droppingFirst k: Int) -> [Element] {
        (min(k, count)..<count).map { slots[slotIndex($0)]! }
    }

    mutating func append(_ element: Element) {
        if count == slots.count { relocate(capacity: max(16, 2 * slots.count)) }
        slots[slotIndex(count)] = element
        count += 1
    }

    /// Drops the oldest elements while `predicate` holds for them. (It used to return them too: a
    /// change log that drops one event a change then built and freed an array for it each time.)
    mutating func removeFirst(while predicate: (Element) -> Bool) {
        dropOldest(while: predicate) { _ in }
    }

    /// Drops the oldest element and returns it, if there is one and `predicate` holds for it: to
    /// take elements one at a time as they are handled, with no array of them in between.
    mutating func popFirst(if predicate: (Element) -> Bool) -> Element? {
        var popped: Element?
        dropOldest {
            popped == nil && predicate($0)
        } handing: {
            popped = $0
        }
        return popped
    }

    /// Drops the `k` oldest elements (fewer if it holds fewer). Without a predicate to call: a full
    /// change log drops one this way at every append, and the predicate form, with its copy of each
    /// element, cost about 40 instructions more each time (most of what is left is freeing it).
    mutating func removeFirst(_ k: Int) {
        for _ in 0..<min(k, count) {
            slots[head] = nil
            head = slotIndex(1)
            count -= 1
        }
        shrinkIfMostlyEmpty()
    }

    private mutating func dropOldest(while predicate: (Element) -> Bool, handing dropped: (Element) -> Void) {
        while count > 0, let oldest = slots[head], predicate(oldest) {
            slots[head] = nil
            head = slotIndex(1)
            count -= 1
            dropped(oldest)
        }
        shrinkIfMostlyEmpty()
    }

    /// Gives back a burst's storage once a quarter of it is in use: shrinking at every drop below
    /// half would move every element again at each drop while a long log drains one by one.
    private mutating func shrinkIfMostlyEmpty() {
        if slots.count > retainedBufferCapacity && slots.count > 4 * count {
            relocate(capacity: retainedCapacity(for: count))
        }
    }

    /// The slot of the element `offset` places after the oldest.
    private func slotIndex(_ offset: Int) -> Int {
        let index = head + offset
        return index < slots.count ? index : index - slots.count
    }

    /// Moves the elements, oldest first, to the start of new storage of `capacity` slots.
    private mutating func relocate(capacity: Int) {
        var relocated = [Element?](repeating: nil, count: capacity)
        for offset in 0..<count { relocated[offset] = slots[slotIndex(offset)].take() }
        slots = relocated
        head = 0
    }
}

extension FrontDroppingArray: Sendable where Element: Sendable {}
