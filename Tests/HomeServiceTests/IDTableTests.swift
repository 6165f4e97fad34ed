import Testing

@testable import HomeService

@Suite struct IDTableTests {
    struct Thing: Equatable {
        var name: String
        var parts: [Int]
    }

    @Test func storesChangesInPlaceRemovesAndReusesPositions() {
        var table = IDTable<IDKind.Room, Thing>()
        let ids = (0..<5).map { _ in RoomID.random() }
        for (number, id) in ids.enumerated() { table[id] = Thing(name: "thing \(number)", parts: []) }
        #expect(table.count == 5 && !table.isEmpty)

        table[ids[1]]!.name = "renamed"
        table[ids[1]]?.parts.append(7)
        table[RoomID.random()]?.parts.append(8)  // no such id: nothing happens
        #expect(table[ids[1]] == Thing(name: "renamed", parts: [7]))
        #expect(table.count == 5)

        table[ids[2]] = nil
        table[ids[2]] = nil  // removing twice is harmless
        #expect(table[ids[2]] == nil && table.count == 4)

        let newcomer = RoomID.random()
        table[newcomer] = Thing(name: "new", parts: [1])
        #expect(table[newcomer] == Thing(name: "new", parts: [1]))
        #expect(table[ids[2]] == nil)
        #expect(Set(table.values.map(\.name)) == ["thing 0", "renamed", "thing 3", "thing 4", "new"])
        #expect(table.dictionary.count == 5 && table.dictionary[ids[4]]?.name == "thing 4")

        table[ids[0]] = Thing(name: "replaced", parts: [])
        #expect(table[ids[0]]?.name == "replaced" && table.count == 5)
    }

    struct Refusal: Error, Equatable {}

    @Test func updatesWhereTheObjectLiesAndReadsPassErrorsOn() throws {
        var table = IDTable<IDKind.Room, Thing>()
        let id = RoomID.random()
        table[id] = Thing(name: "thing", parts: [1])

        #expect(
            table.update(id) { thing -> Int in
                thing.parts.append(2)
                return thing.parts.count
            } == 2
        )
        #expect(table[id] == Thing(name: "thing", parts: [1, 2]))
        let missing = RoomID.random()
        #expect(table.update(missing) { $0.name = "ghost" } == nil)
        #expect(table[missing] == nil && table.count == 1)

        #expect(table.read(id, \.parts) == [1, 2])
        #expect(throws: Refusal()) { try table.read(id) { _ throws(Refusal) in throw Refusal() } }
        #expect(try table.read(missing) { _ throws(Refusal) -> Int in throw Refusal() } == nil)
    }
}
