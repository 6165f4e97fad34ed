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
