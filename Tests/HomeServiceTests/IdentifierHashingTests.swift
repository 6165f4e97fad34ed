import Testing

@testable import HomeService

/// Identifiers' own hash (one keyed multiply) keeps sets and dictionaries correct and spreads even
/// the most regular identifiers as evenly as random ones.
@Suite struct IdentifierHashingTests {
    /// Identifiers that differ in one word only, counting up: the least random a peer could send.
    static let patterns: [@Sendable (Int) -> UniqueIdentifier] = [
        { UniqueIdentifier(high: 0, low: UInt64($0)) },
        { UniqueIdentifier(high: UInt64($0), low: 0) },
        { UniqueIdentifier(high: UInt64($0) << 48, low: UInt64($0) << 48) },
        { UniqueIdentifier(high: UInt64($0), low: UInt64($0)) },
    ]

    @Test(arguments: 0..<patterns.count, [0, 12345, -1])
    func regularIdentifiersFillBucketsLikeRandomOnes(pattern: Int, seed: Int) {
        let buckets = 1 << 16
        var used = Set<Int>()
        for index in 0..<buckets {
            used.insert(Self.patterns[pattern](index)._rawHashValue(seed: seed) & (buckets - 1))
        }
        // Random hashes of as many keys fill 1 - 1/e of the buckets (41,427); a weak mix far fewer.
        #expect(used.count > 40_000)
    }

    /// The touched rows' keys hash through their identifiers: every case of one identifier is a key
    /// of its own, an equal key (built again) is found, and keys without an identifier work too.
    @Test func recordKeysOfOneIdentifierAreDistinctAndFoundAgain() {
        func keys(_ raw: UniqueIdentifier) -> [RecordKey] {
            [
                .account(AccountID(raw)), .token(AccessTokenID(raw)), .home(HomeID(raw)),
                .removedHomeEvents(HomeID(raw)), .member(HomeID(raw), AccountID(raw)), .room(RoomID(raw)),
                .zone(ZoneID(raw)), .accessory(AccessoryID(raw)), .reachability(AccessoryID(raw)),
                .service(ServiceID(raw)), .characteristic(CharacteristicID(raw)), .value(CharacteristicID(raw)),
                .serviceGroup(ServiceGroupID(raw)), .actionSet(ActionSetID(raw)), .trigger(TriggerID(raw)),
                .characteristicKind(number: Int32(truncatingIfNeeded: raw.low)),
                .idempotencyBatch(Int64(truncatingIfNeeded: raw.high)),
            ]
        }
        // characteristicKind keeps 32 bits of an identifier: two of 500 random ones share them once in
        // ~34,000 runs (it failed CI once), so the identifiers are drawn with distinct low words.
        var lowWords = Set<Int32>()
        var identifiers: [UniqueIdentifier] = []
        while identifiers.count < 500 {
            let raw = UniqueIdentifier.random()
            if lowWords.insert(Int32(truncatingIfNeeded: raw.low)).inserted { identifiers.append(raw) }
        }
        let all = Set(identifiers.flatMap(keys))
        #expect(all.count == identifiers.count * keys(identifiers[0]).count)
        // Each case is hashed apart: the cases of one identifier do not share a bucket.
        #expect(Set(all.map { $0._rawHashValue(seed: 0) }).count > all.count * 99 / 100)
        for raw in identifiers {
            for key in keys(raw) { #expect(all.contains(key)) }
        }
        #expect(!all.contains(.room(RoomID(.random()))))
        #expect(!all.contains(.member(HomeID(identifiers[0]), AccountID(identifiers[1]))))
    }

    @Test func setsAndDictionariesFindEveryIdentifierAndNoOther() {
        let ids =
            (0..<20_000).map { AccessoryID(Self.patterns[$0 % Self.patterns.count]($0 / Self.patterns.count + 1)) }
            + (0..<20_000).map { _ in AccessoryID.random() }
        let table = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        #expect(table.count == ids.count)
        for (index, id) in ids.enumerated() { #expect(table[id] == index) }
        let set = Set(ids.map(\.raw))
        #expect(set.count == ids.count)
        #expect(!set.contains(UniqueIdentifier(high: 1, low: 1 << 62)))
        #expect(AccessoryID(ids[0].raw).hashValue == ids[0].hashValue)
    }
}
