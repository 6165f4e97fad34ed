import HomeService
import Testing

@testable import HomeAPI

/// The subscription's kind filter answers as a `Set` would, for every kind there is.
@Suite struct ChangeKindsTests {
    @Test func everyKindFitsTheMaskAndMembershipMatchesASet() {
        #expect(ChangeKind.allCases.allSatisfy { $0.rawValue < 64 })
        let chosen: Set<ChangeKind> = [.homesUpdated, .characteristicValueUpdated, .newAccessoryRemoved, .roomAdded]
        let kinds = ChangeKinds(chosen)
        for kind in ChangeKind.allCases {
            #expect(kinds.contains(kind) == chosen.contains(kind), "\(kind)")
            #expect(!ChangeKinds().contains(kind))
        }
    }
}

/// The named-characteristic filter answers as a set would, listed or hashed.
@Suite struct NamedCharacteristicsTests {
    @Test(arguments: [0, 1, NamedCharacteristics.listedAtMost, NamedCharacteristics.listedAtMost + 1, 40])
    func membershipMatchesASet(count: Int) {
        let named = Set((0..<count).map { _ in CharacteristicID.random() })
        let filter = NamedCharacteristics(named)
        #expect(filter.isEmpty == named.isEmpty)
        for id in named { #expect(filter.contains(id)) }
        for _ in 0..<20 { #expect(!filter.contains(.random())) }
    }
}
