import Testing

@testable import HomeService

@Suite struct FrontDroppingArrayTests {
    private final class Tracked {}

    @Test func aDroppedElementIsReleasedWhenItIsDropped() {
        // A log that kept dropped events until half of it was dropped released them all at once: a
        // stall of the event loop every time.
        var queue = FrontDroppingArray<Tracked>()
        weak var oldest: Tracked?
        do {
            let first = Tracked()
            oldest = first
            queue.append(first)
        }
        for _ in 0..<9 { queue.append(Tracked()) }
        queue.removeFirst(1)
        #expect(oldest == nil)
        #expect(queue.count == 9)
    }

    @Test func aLogDrainingOneByOneKeepsItsStorage() {
        // Shrinking whenever the room exceeded twice the count moved every element at each drop.
        // Draining from 10,000 to 4,000 may give storage back once (past a quarter in use), not
        // at each drop.
        var queue = FrontDroppingArray<Int>()
        for value in 0..<10_000 { queue.append(value) }
        var capacity = queue.capacity
        var shrinks = 0
        for _ in 0..<6_000 {
            queue.removeFirst(1)
            if queue.capacity != capacity {
                shrinks += 1
                capacity = queue.capacity
            }
        }
        #expect(shrinks <= 1)
        #expect(queue.elements == Array(6_000..<10_000))
    }

    @Test func itBehavesAsAnArrayThatDropsFromTheFrontThroughWrapsAndGrowth() {
        var generator = SystemRandomNumberGenerator()
        var queue = FrontDroppingArray<Int>()
        var model: [Int] = []
        var next = 0
        for _ in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<6:
                queue.append(next)
                model.append(next)
                next += 1
            case 6..<8:
                let k = Int.random(in: 0...3, using: &generator)
                queue.removeFirst(k)
                model.removeFirst(min(k, model.count))
            case 8:
                let bound = (model.first ?? 0) + Int.random(in: 0...4, using: &generator)
                queue.removeFirst { $0 < bound }
                model.removeFirst(model.prefix { $0 < bound }.count)
            default:
                let bound = (model.first ?? 0) + Int.random(in: 0...4, using: &generator)
                var popped: [Int] = []
                while let element = queue.popFirst(if: { $0 < bound }) { popped.append(element) }
                let expected = model.prefix { $0 < bound }
                #expect(popped == Array(expected))
                model.removeFirst(expected.count)
            }
            #expect(queue.count == model.count)
            #expect(queue.first == model.first)
        }
        #expect(queue.elements == model)
        #expect(queue.elements(droppingFirst: 3) == Array(model.dropFirst(3)))
        #expect(queue.elements(droppingFirst: model.count + 5) == [])
    }
}
