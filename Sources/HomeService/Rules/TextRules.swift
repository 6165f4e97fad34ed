/// Limits on the free text a client or an accessory stores (names, manufacturer, model, firmware,
/// descriptions, time zones), so that no caller can grow the server with one huge string.
public enum TextRules {
    /// The limit for short descriptive text: manufacturer, model, firmware version, serial number.
    public static let maximumLength = 64
    /// The limit for longer text: a characteristic's manufacturer description.
    public static let maximumDescriptionLength = 256

    /// - Parameters:
    ///   - what: names the text in the message ("accessory name", "manufacturer").
    ///   - maximum: the most characters (grapheme clusters) allowed.
    ///   - maximumBytes: the most UTF-8 bytes allowed (4 per character unless given).
    /// - Throws: ``HomeServiceError`` with 46 (StringLongerThanMaximum), saying both limits.
    public static func checkLength(
        _ text: String,
        of what: @autoclosure () -> String,
        maximum: Int = maximumLength,
        maximumBytes: Int? = nil
    ) throws(HomeServiceError) {
        let byteLimit = maximumBytes ?? maximum * 4
        // The byte count is O(1) for native strings and bounds the character count below.
        let bytes = text.utf8.count
        guard bytes > maximum else { return }
        if bytes > byteLimit {
            throw HomeServiceError(
                .stringLongerThanMaximum,
                "\(what()) is \(bytes) bytes long; at most \(maximum) characters (\(byteLimit) bytes) are allowed"
            )
        }
        let characters = text.count
        if characters > maximum {
            throw HomeServiceError(
                .stringLongerThanMaximum,
                "\(what()) is \(characters) characters long; at most \(maximum) are allowed"
            )
        }
    }
}
