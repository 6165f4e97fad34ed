import Testing

@testable import HomeService

@Suite struct UniqueIdentifierTests {
    @Test func randomIdentifiersAreDistinctVersion4UUIDs() {
        let identifiers = (0..<10_000).map { _ in UniqueIdentifier.random() }
        #expect(Set(identifiers).count == 10_000)
        for identifier in identifiers.prefix(100) {
            let text = identifier.description
            #expect(Array(text)[14] == "4")  // version
            #expect("89AB".contains(Array(text)[19]))  // variant
        }
    }

    @Test func bytesAndStringsRoundTrip() throws {
        let identifier = try #require(UniqueIdentifier(uuidString: "00112233-4455-6677-8899-aabbccddeeff"))
        #expect(identifier.description == "00112233-4455-6677-8899-AABBCCDDEEFF")
        #expect(
            identifier.bytes == [
                0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF,
            ]
        )
        #expect(UniqueIdentifier(bytes: identifier.bytes) == identifier)
        let random = UniqueIdentifier.random()
        #expect(UniqueIdentifier(uuidString: random.description) == random)
        #expect(UniqueIdentifier(bytes: random.bytes) == random)
    }

    @Test(arguments: [
        "", "00112233-4455-6677-8899", "0011223-34455-6677-8899-aabbccddeeff", "0011223G-4455-6677-8899-aabbccddeeff",
    ])
    func malformedStringsAreRejected(text: String) {
        #expect(UniqueIdentifier(uuidString: text) == nil)
    }

    @Test func onlySixteenBytesMakeAnIdentifier() {
        #expect(UniqueIdentifier(bytes: [UInt8](repeating: 1, count: 15)) == nil)
        #expect(UniqueIdentifier(bytes: [UInt8](repeating: 1, count: 17)) == nil)
    }

    @Test func typedIDsWrapTheSameIdentifier() {
        let raw = UniqueIdentifier.random()
        let home = HomeID(raw)
        #expect(home.raw == raw)
        #expect(home.description == raw.description)
        #expect(HomeID.random() != HomeID.random())
    }
}
