import Testing

@testable import HomeService

@Suite struct NameRulesTests {
    @Test(arguments: [
        "Kid's Night Light", "Garage 1 Opener", "Home 1", "home1", "卧室", "厨房", "Living Room", "A", "7",
        "Kid\u{2019}s Room", "Café", "Cafe\u{301}", "Ünterhaus 2", "Спальня", "غرفة النوم",
    ])
    func acceptsValidNames(name: String) throws {
        try NameRules.validate(name, kind: "room")
    }

    struct Violation: Sendable, CustomTestStringConvertible {
        var name: String
        var code: HomeKitErrorCode
        var testDescription: String { "\"\(name)\" → \(code.rawValue)" }
    }

    @Test(arguments: [
        Violation(name: "Kitchen!", code: .nameContainsProhibitedCharacters),
        Violation(name: "Bed-room", code: .nameContainsProhibitedCharacters),
        Violation(name: "Room\tTwo", code: .nameContainsProhibitedCharacters),
        Violation(name: "Home 🏠", code: .nameContainsProhibitedCharacters),
        Violation(name: "Hall_way", code: .nameContainsProhibitedCharacters),
        Violation(name: " Kitchen", code: .nameDoesNotStartWithValidCharacters),
        Violation(name: "'Den", code: .nameDoesNotStartWithValidCharacters),
        Violation(name: "Kitchen ", code: .nameDoesNotEndWithValidCharacters),
        Violation(name: "Kids'", code: .nameDoesNotEndWithValidCharacters),
        Violation(name: " ", code: .nameDoesNotStartWithValidCharacters),
        Violation(name: "", code: .invalidParameter),
        // docs/API.md's rule, case by case: a mark only after a letter; digits only in Unicode's
        // decimal digits; no symbol, punctuation, control or formatting character.
        Violation(name: "\u{301}Cafe", code: .nameDoesNotStartWithValidCharacters),
        Violation(name: "Room\u{202E}2", code: .nameContainsProhibitedCharacters),
        Violation(name: "Room\u{200B}2", code: .nameContainsProhibitedCharacters),
        Violation(name: "Floor \u{2167}", code: .nameContainsProhibitedCharacters),
        Violation(name: "Room \u{B2}", code: .nameContainsProhibitedCharacters),
        Violation(name: "Room\u{A0}2", code: .nameContainsProhibitedCharacters),
        Violation(name: "Room.2", code: .nameContainsProhibitedCharacters),
    ])
    func rejectsInvalidNamesWithTheirCode(violation: Violation) {
        do {
            try NameRules.validate(violation.name, kind: "room")
            Issue.record("\"\(violation.name)\" was accepted")
        } catch {
            #expect(error.code == violation.code)
            if !violation.name.isEmpty { #expect(error.message.contains("\"\(violation.name)\"")) }
        }
    }

    @Test func prohibitedCharacterIsNamedInTheMessage() {
        do {
            try NameRules.validate("Kitchen!", kind: "room")
        } catch {
            #expect(error.message == "room name \"Kitchen!\" contains \"!\" (U+0021), which names may not contain")
            #expect(error.description.hasPrefix("NameContainsProhibitedCharacters (35): "))
        }
    }

    @Test(arguments: [
        ("Home1", "home 1", true), ("Home 1", "home1", true), ("Kid's Room", "kids room", true),
        ("Kid\u{2019}s Room", "Kid's Room", true), ("Café", "Cafe\u{301}", true), ("CAFÉ", "café", true),
        ("卧室", "卧室", true), ("Garage 1", "Garage 2", false), ("Home", "Homes", false), ("厨房", "卧室", false),
    ])
    func similarNamesCollide(first: String, second: String, collide: Bool) {
        #expect(NameRules.areSimilar(first, second) == collide)
        #expect(NameRules.areSimilar(second, first) == collide)
    }

    /// ASCII names take a byte-wise path to their key; it must give the general form's key.
    @Test func asciiKeysAreTheGeneralKeys() {
        let printable = (0x20..<0x7F).map { Character(Unicode.Scalar(UInt8($0))) }
        let names = [String(printable), "Kid's Room", "LIVING ROOM 2", "a", "", "'  '"] + printable.map { "X\($0)y" }
        for name in names {
            #expect(NameRules.asciiComparisonKey(name) == NameRules.unicodeComparisonKey(name), "\(name)")
        }
        #expect(NameRules.asciiComparisonKey("Café") == nil)
        #expect(NameRules.comparisonKey("Kid's Room") == "kidsroom")
    }
}

@Suite struct HomeKitErrorCodeTests {
    @Test(arguments: [
        (HomeKitErrorCode.unexpectedError, Int32(-1), "UnexpectedError"), (.notFound, 2, "NotFound"),
        (.insufficientPrivileges, 17, "InsufficientPrivileges"),
        (.objectWithSimilarNameExistsInHome, 31, "ObjectWithSimilarNameExistsInHome"),
        (.nameDoesNotEndWithValidCharacters, 60, "NameDoesNotEndWithValidCharacters"),
        (.cannotRemoveBuiltinActionSet, 83, "CannotRemoveBuiltinActionSet"),
        (.timedOutWaitingForAccessory, 100, "TimedOutWaitingForAccessory"),
    ])
    func numbersAndNamesMatchHomeKit(code: HomeKitErrorCode, number: Int32, name: String) {
        #expect(code.rawValue == number)
        #expect(code.name == name)
    }

    @Test func everyCodeHasAUniqueNumber() {
        let numbers = HomeKitErrorCode.allCases.map(\.rawValue)
        #expect(Set(numbers).count == numbers.count)
        // HOMEKIT.md names 77 codes (37-41 are listed only as "user-management codes").
        #expect(numbers.count == 77)
    }
}
