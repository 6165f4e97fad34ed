import Testing

@testable import HomeService

/// A member's user id (HomeKit's `HMUser.uniqueIdentifier`) is never their account's id, differs
/// from home to home, and is the same every time it is asked for.
@Suite struct UserIDTests {
    @Test func aUserIDIsNotTheAccountsAndDiffersByHome() {
        let account = AccountID.random()
        let (first, second) = (HomeID.random(), HomeID.random())
        let inFirst = UserID(account: account, home: first)
        #expect(inFirst == UserID(account: account, home: first))
        #expect(inFirst.raw != account.raw)
        #expect(inFirst != UserID(account: account, home: second))
        #expect(inFirst != UserID(account: AccountID.random(), home: first))
        // Shaped as an RFC 9562 version 8 UUID.
        #expect(inFirst.raw.high & 0xF000 == 0x8000 && inFirst.raw.low >> 62 == 0b10)
    }

    @Test(arguments: StoreKind.allCases)
    func membersAreChangedByUserIDNotByAccountID(_ kind: StoreKind) throws {
        let f = try RulesFixture(kind)
        let guest = try f.store.createAccount(named: "Guest", by: f.owner).id
        try f.store.addUser(guest, to: f.home.id, role: .guest, as: f.owner)
        let user = try #require(try f.store.users(in: f.home.id, as: f.owner).first { $0.account == guest })
        #expect(user.id == UserID(account: guest, home: f.home.id))

        // The account's own id names no user.
        let byAccount = UserID(guest.raw)
        #expect(codeThrown { try f.store.removeUser(byAccount, from: f.home.id, as: f.owner) } == .notFound)
        #expect(try f.store.users(in: f.home.id, as: f.owner).contains { $0.account == guest })

        #expect(try f.store.updateUserAccess(user.id, in: f.home.id, role: .administrator, as: f.owner) == guest)
        try f.store.removeUser(user.id, from: f.home.id, as: f.owner)
        #expect(try !f.store.users(in: f.home.id, as: f.owner).contains { $0.account == guest })
    }
}
