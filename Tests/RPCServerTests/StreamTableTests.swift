import TestSupport
import Testing
import Wire

@testable import RPCServer

/// The stream table against a `Dictionary` doing the same operations.
@Suite struct StreamTableTests {
    @Test(arguments: 0..<20)
    func behavesLikeADictionaryUnderRandomChurn(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed))
        var table = StreamTable<Int>()
        var reference: [StreamID: Int] = [:]
        var nextID: UInt32 = 1
        for step in 0..<5_000 {
            let action = random.next() % 10
            if action < 5 || reference.isEmpty {
                // Open a call: ids increase, by 1 or 2 as a client would.
                let id = StreamID(nextID)
                nextID += UInt32(1 + random.next() % 2)
                table.insert(step, for: id)
                reference[id] = step
            } else if action < 9 {
                // End a random open call.
                let id = reference.keys.sorted()[Int(random.next() % UInt64(reference.count))]
                #expect(table.removeValue(for: id) == reference.removeValue(forKey: id))
            } else {
                // Look up an id that may or may not be open.
                let id = StreamID(UInt32(1 + random.next() % UInt64(nextID)))
                #expect(table[id] == reference[id])
                #expect(table.contains(id) == (reference[id] != nil))
            }
            #expect(table.count == reference.count)
        }
        for (id, value) in reference {
            #expect(table[id] == value)
        }
        #expect(Set(table.allIDs) == Set(reference.keys))
        #expect(table.allValues.sorted() == reference.values.sorted())
    }

    @Test func removingFromTheMiddleOfAChainKeepsTheRestFindable() {
        var table = StreamTable<String>()
        // Enough ids to force collisions and a wrap-around in a small table.
        let ids = (1...12).map { StreamID(UInt32($0 * 16)) }
        for id in ids { table.insert("\(id.rawValue)", for: id) }
        for id in ids where id.rawValue % 32 == 0 { table.removeValue(for: id) }
        for id in ids {
            #expect(table[id] == (id.rawValue % 32 == 0 ? nil : "\(id.rawValue)"))
        }
        #expect(table.count == 6)
    }

    @Test func insertingAnExistingIDReplacesItsValue() {
        var table = StreamTable<Int>()
        table.insert(1, for: StreamID(7))
        table.insert(2, for: StreamID(7))
        #expect(table.count == 1)
        #expect(table[StreamID(7)] == 2)
        #expect(table.removeValue(for: StreamID(9)) == nil)
    }
}
