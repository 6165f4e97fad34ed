import Testing

@testable import HomeService

/// The API's cached read, which checks and reads in one pass, against the two-step path it replaced.
@Suite struct CachedReadTests {
    /// The API's one-pass cached read (`readValue(_:in:as:)`) answers exactly as checking the object
    /// in the named home and then reading it: the same value, or the same error.
    @Test(arguments: StoreKind.allCases)
    func theOnePassCachedReadAnswersAsCheckingThenReading(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let cabin = try f.store.addHome(named: "Cabin", as: f.owner)
        let stranger = try f.harness.account("Sam")
        let guest = try f.harness.account("Gil")
        try f.store.addUser(guest, to: f.home.id, role: .guest, as: f.owner)
        try f.store.setBlocked(f.bridge.id, true)
        let brightness = f.characteristic(Accessories.brightness, on: f.lamp)
        let cases: [(CharacteristicID, HomeID, AccountID)] = [
            (brightness, f.home.id, f.owner),
            (brightness, f.home.id, guest),
            (brightness, cabin.id, f.owner),  // 11
            (brightness, f.home.id, stranger),  // 2
            (brightness, cabin.id, stranger),  // 2
            (brightness, HomeID(.random()), f.owner),  // 2
            (CharacteristicID(.random()), f.home.id, f.owner),  // 2
            (f.characteristic(Accessories.identify, on: f.custom), f.home.id, f.owner),  // 6
            (f.characteristic(Accessories.on, on: f.porch), f.home.id, f.owner),  // 61
        ]
        var codes: [HomeKitErrorCode?] = []
        // One memo carried through every case (each then starts from another case's memo), and
        // each case also with none: neither may change an answer.
        var carriedMemo: MembershipMemo?
        for (id, home, account) in cases + cases {
            let twoPass = Result { () throws(HomeServiceError) in
                try f.store.checkObject(id, isIn: home, as: account)
                return try f.store.readValue(id, as: account)
            }
            var freshMemo: MembershipMemo?
            let onePass = Result { () throws(HomeServiceError) in
                try f.store.readValue(id, in: home, as: account, memo: &freshMemo)
            }
            let withCarriedMemo = Result { () throws(HomeServiceError) in
                try f.store.readValue(id, in: home, as: account, memo: &carriedMemo)
            }
            #expect(onePass == twoPass)
            #expect(withCarriedMemo == twoPass)
            codes.append(onePass.failure?.code)
        }
        codes.removeLast(cases.count)
        #expect(
            codes == [
                nil, nil, .objectAssociatedToAnotherHome, .notFound, .notFound, .notFound, .notFound,
                .writeOnlyCharacteristic, .accessoryIsBlocked,
            ]
        )
    }

    /// Each characteristic's cache slot holds its accessory's state (blocked, itself or through its
    /// bridge; reachable), which the cached read answers from: after every change of a block or a
    /// reachability, at start-up, and after a reopen, it matches the accessories.
    @Test(arguments: StoreKind.allCases)
    func theCacheHoldsEachAccessorysStateThroughItsChanges(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        func expectInStep(_ step: String) {
            for accessory in f.store.accessories.values {
                for service in accessory.services {
                    for id in f.store.services[service]!.characteristics {
                        let state = f.store.cache.accessoryState(f.store.characteristics[id]!.slot)
                        let expected = f.store.availability(of: accessory.id)
                        #expect(state == expected, "\(step): \(accessory.name)")
                    }
                }
            }
        }
        expectInStep("added")
        let changes: [(String, () throws -> Void)] = [
            ("lamp reachable", { try f.store.setReachable(f.lamp.id, true) }),
            ("bridge reachable", { try f.store.setReachable(f.bridge.id, true) }),
            ("bridge blocked", { try f.store.setBlocked(f.bridge.id, true) }),
            ("porch lost", { try f.store.setReachable(f.porch.id, false) }),
            ("bridge unblocked", { try f.store.unblockAccessory(f.bridge.id, as: f.owner) }),
            ("lamp blocked", { try f.store.setBlocked(f.lamp.id, true) }),
            ("start-up", { f.store.markEveryAccessoryUnreachable() }),
            ("reopened", { try f.harness.reopen() }),
            ("bridge back", { try f.store.setReachable(f.bridge.id, true) }),
        ]
        for (step, change) in changes {
            try change()
            expectInStep(step)
        }
    }

    /// A memo of a membership stops vouching once any membership changes: a user removed from the
    /// home, or the home removed, reads nothing more with the memo their last read left.
    @Test(arguments: StoreKind.allCases)
    func aMembershipMemoStopsVouchingWhenMembershipsChange(kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let guest = try f.harness.account("Gil")
        try f.store.addUser(guest, to: f.home.id, role: .guest, as: f.owner)
        let brightness = f.characteristic(Accessories.brightness, on: f.lamp)
        var memo: MembershipMemo?
        _ = try f.store.readValue(brightness, in: f.home.id, as: guest, memo: &memo)
        #expect(memo != nil)
        try f.store.removeUser(UserID(account: guest, home: f.home.id), from: f.home.id, as: f.owner)
        #expect(throws: HomeServiceError.self) {
            try f.store.readValue(brightness, in: f.home.id, as: guest, memo: &memo)
        }
        // The owner's memo survives an unrelated change only until the home is gone.
        var ownerMemo: MembershipMemo?
        _ = try f.store.readValue(brightness, in: f.home.id, as: f.owner, memo: &ownerMemo)
        _ = try f.store.removeHome(f.home.id, as: f.owner)
        #expect(throws: HomeServiceError.self) {
            try f.store.readValue(brightness, in: f.home.id, as: f.owner, memo: &ownerMemo)
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
