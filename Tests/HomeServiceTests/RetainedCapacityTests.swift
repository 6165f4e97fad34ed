import Testing

@testable import HomeService

/// Buffers reused mutation after mutation keep a steady state's room, but not a burst's.
@Suite struct RetainedCapacityTests {
    @Test func aQueueGivesBackTheRoomOfABurstOnceItIsDropped() {
        var queue = FrontDroppingArray<Int>()
        for value in 0..<100_000 { queue.append(value) }
        queue.removeFirst { $0 < 99_990 }
        #expect(Array(queue.elements) == Array(99_990..<100_000))
        #expect(queue.capacity <= retainedBufferCapacity)
        queue.removeFirst(10)
        #expect(queue.isEmpty)
        #expect(queue.capacity <= retainedBufferCapacity)
    }

    @Test func aChangeForTheWriterStaysSmallWhateverItCarries() {
        // An event is shared, not copied: the batch, the log and each subscriber's queue hold one
        // reference to it, and a queued row change (a value write's too) stays small.
        #expect(MemoryLayout<HomeChange>.stride == MemoryLayout<AnyObject>.stride)
        #expect(MemoryLayout<StoreChange>.stride <= 64)
    }

    @Test func aQueueInItsSteadyStateKeepsItsRoom() {
        var queue = FrontDroppingArray<Int>()
        for value in 0..<1_000 { queue.append(value) }
        let capacity = queue.capacity
        queue.removeFirst(1_000)
        #expect(queue.capacity == capacity)
        for value in 0..<1_000 { queue.append(value) }
        #expect(queue.capacity == capacity)
        #expect(Array(queue.elements) == Array(0..<1_000))
    }

    @Test func anArrayKeepsOnlyModestRoomWhenEmptied() {
        Self.expectModestRoom(small: { Array(0..<100) }, burst: { Array(0..<100_000) })
    }

    @Test func aSetKeepsOnlyModestRoomWhenEmptied() {
        Self.expectModestRoom(small: { Set(0..<100) }, burst: { Set(0..<100_000) })
    }

    /// Emptied, `small` keeps its storage and `burst` gives its back. Each is made here, so that its
    /// storage is not shared: emptying a shared one keeping its capacity allocates a new storage,
    /// whose capacity the allocator may round differently (the test failed now and then).
    static func expectModestRoom<Buffer: ReusedBuffer & Collection>(
        small makeSmall: () -> Buffer,
        burst makeBurst: () -> Buffer
    ) {
        var small = makeSmall()
        let smallCapacity = small.capacity
        small.removeAllKeepingModestCapacity()
        #expect(small.isEmpty && small.capacity == smallCapacity)
        var burst = makeBurst()
        burst.removeAllKeepingModestCapacity()
        #expect(burst.isEmpty && burst.capacity == 0)
    }

    /// A start-up reset on a large store queues one change per accessory in one mutation; once it
    /// is committed, the store's change buffers are back to a steady state's size.
    @Test func aCommittedBurstLeavesTheStoresBuffersSmall() throws {
        var limits = ObjectLimits()
        limits.roomsPerHome = 3 * retainedBufferCapacity
        let harness = try StoreHarness(.memory, limits: limits)
        let store = harness.store
        let home = try store.addHome(named: "Burst", as: harness.owner)
        let (result, _) = store.write { () throws(HomeServiceError) in
            for index in 0..<(2 * retainedBufferCapacity) {
                _ = try store.addRoom(named: "Room \(index)", to: home.id, as: harness.owner)
            }
        }
        try result.get()
        #expect(store.waitForCommits() == nil)
        #expect(try store.home(home.id, as: harness.owner).rooms.count == 2 * retainedBufferCapacity)
        let capacities = store.changeBufferCapacities
        #expect(capacities.allSatisfy { $0 <= retainedBufferCapacity }, "\(capacities)")
    }
}
