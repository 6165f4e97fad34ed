/// How much room a reused buffer keeps when it is emptied. Keeping the room saves a reallocation
/// per mutation in the steady state, but a buffer that once held a burst (100,000 changes at a
/// start-up reset) would otherwise hold its peak for the rest of the process: tens of megabytes.
let retainedBufferCapacity = 4_096

/// The capacity worth keeping for a buffer that now holds `count` elements: room for twice as
/// many, or for ``retainedBufferCapacity``, whichever is more.
func retainedCapacity(for count: Int) -> Int {
    max(retainedBufferCapacity, 2 * count)
}

/// A collection emptied and refilled mutation after mutation.
protocol ReusedBuffer {
    var capacity: Int { get }
    mutating func removeAll(keepingCapacity: Bool)
}

extension ReusedBuffer {
    /// Empties the buffer, keeping its storage only when that is no larger than a steady state needs.
    mutating func removeAllKeepingModestCapacity() {
        removeAll(keepingCapacity: capacity <= retainedBufferCapacity)
    }
}

extension Array: ReusedBuffer {}
extension Set: ReusedBuffer {}
