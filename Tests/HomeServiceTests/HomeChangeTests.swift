import Testing

@testable import HomeService

/// A change is a shared object but compares as the value it holds: a change replayed from the file
/// equals the one delivered live.
@Suite struct HomeChangeTests {
    static func change(revision: UInt64 = 7, name: String = "Hall") -> HomeChange {
        HomeChange(
            home: HomeID(UniqueIdentifier(high: 1, low: 2)),
            revision: revision,
            time: 1_764_000_000_000,
            initiator: .account(AccountID(UniqueIdentifier(high: 3, low: 4))),
            event: ChangeEvent(.roomAdded, object: UniqueIdentifier(high: 5, low: 6), name: name)
        )
    }

    @Test func twoChangesWithTheSameContentAreEqualAndHashAlike() {
        let first = Self.change()
        let second = Self.change()
        #expect(first !== second)
        #expect(first == second)
        #expect(Set([first, second]).count == 1)
    }

    @Test func anyDifferentFieldMakesThemDifferent() {
        #expect(Self.change() != Self.change(revision: 8))
        #expect(Self.change() != Self.change(name: "Kitchen"))
    }
}
