/// HomeKit's naming rules for homes, rooms, zones, accessories, services, service groups, action sets
/// and triggers (docs/HOMEKIT.md, "Naming").
///
/// A name holds only letters and digits (any script: 卧室 and 厨房 are valid), spaces and apostrophes,
/// and starts and ends with a letter or digit. Two names collide when they are equal ignoring case,
/// spaces and apostrophes ("Home1" and "home 1"), which ``comparisonKey(_:)`` captures.
public enum NameRules {
    /// The longest name, in characters (HAP's limit for the Name characteristic).
    public static let maximumLength = 64
    /// The most UTF-8 bytes a name may take, so that combining marks cannot make one huge character.
    public static let maximumBytes = 256

    /// Checks `name` against the length and character rules, in HomeKit's order: the first
    /// character, then prohibited characters, then the last character.
    /// - Parameter kind: what is being named, for the message ("room", "home", ...).
    /// - Throws: ``HomeServiceError`` with 3 for an empty name, 46 for one over 64 characters, 36 (bad
    ///   first character), 35 (a prohibited character), 60 (bad last character).
    public static func validate(_ name: String, kind: String) throws(HomeServiceError) {
        guard let first = name.unicodeScalars.first, let last = name.unicodeScalars.last else {
            throw HomeServiceError(.invalidParameter, "\(kind) name must not be empty")
        }
        try TextRules.checkLength(name, of: "\(kind) name", maximum: maximumLength, maximumBytes: maximumBytes)
        // A combining mark belongs to the letter before it: there is none before the first.
        guard isLetterOrDigit(first), !isMark(first) else {
            throw HomeServiceError(
                .nameDoesNotStartWithValidCharacters,
                "\(kind) name \"\(name)\" must start with a letter or digit, not \(describe(first))"
            )
        }
        if let prohibited = name.unicodeScalars.first(where: { !isAllowed($0) }) {
            throw HomeServiceError(
                .nameContainsProhibitedCharacters,
                "\(kind) name \"\(name)\" contains \(describe(prohibited)), which names may not contain"
            )
        }
        guard isLetterOrDigit(last) else {
            throw HomeServiceError(
                .nameDoesNotEndWithValidCharacters,
                "\(kind) name \"\(name)\" must end with a letter or digit, not \(describe(last))"
            )
        }
    }

    /// The form in which names are compared: lowercased, without spaces and apostrophes.
    public static func comparisonKey(_ name: String) -> String {
        asciiComparisonKey(name) ?? unicodeComparisonKey(name)
    }

    /// The key of any name.
    static func unicodeComparisonKey(_ name: String) -> String {
        String(String.UnicodeScalarView(name.lowercased().unicodeScalars.filter { !isSpace($0) && !isApostrophe($0) }))
    }

    /// The key of an ASCII name, built from its bytes in one pass (start-up keys 200,000 names at
    /// 100,000 accessories, and the general form allocates three times for each); `nil` for any
    /// other name.
    static func asciiComparisonKey(_ name: String) -> String? {
        var name = name
        return name.withUTF8 { bytes -> String? in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            return String(unsafeUninitializedCapacity: bytes.count) { key in
                var length = 0
                for byte in bytes where byte != UInt8(ascii: " ") && byte != UInt8(ascii: "'") {
                    key[length] = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
                    length += 1
                }
                return length
            }
        }
    }

    /// Whether two names collide.
    public static func areSimilar(_ first: String, _ second: String) -> Bool {
        comparisonKey(first) == comparisonKey(second)
    }

    static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        isLetterOrDigit(scalar) || isSpace(scalar) || isApostrophe(scalar)
    }

    static func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber:
            true
        // Combining marks belong to the letter before them (e.g. a decomposed "é").
        case .nonspacingMark, .spacingMark:
            true
        default:
            false
        }
    }

    static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        let category = scalar.properties.generalCategory
        return category == .nonspacingMark || category == .spacingMark
    }

    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " "
    }

    /// The ASCII apostrophe and the typographic one (U+2019) that phones type.
    static func isApostrophe(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "'" || scalar == "\u{2019}"
    }

    private static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        return "\"\(Character(scalar))\" (U+\(padded))"
    }
}
