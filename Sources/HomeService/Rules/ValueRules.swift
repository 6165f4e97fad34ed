/// Checks a value written to a characteristic against its format and metadata
/// (../shared/HOMEKIT.md, "Characteristics").
public enum ValueRules {
    /// Tolerance for deciding that a float lies on the step grid.
    static let stepTolerance = 1e-9

    /// - Parameter characteristic: names the characteristic in messages, e.g. "Brightness"; only
    ///   evaluated for a refusal (finding a catalog name costs more than the check itself).
    /// - Throws: ``HomeServiceError`` with 43 (wrong type), 44 (below minimum), 45 (above maximum),
    ///   46 (string too long), 51 (string too short), or 3 (off the step grid, not a valid value).
    public static func validate(
        _ value: CharacteristicValue,
        against metadata: CharacteristicMetadata,
        characteristic: @autoclosure () -> String
    ) throws(HomeServiceError) {
        switch (metadata.format, value) {
        case (.bool, .bool):
            return
        case (.tlv8, .data(let bytes)), (.data, .data(let bytes)):
            guard bytes.count <= CharacteristicMetadata.absoluteMaxDataLength else {
                throw HomeServiceError(
                    .stringLongerThanMaximum,
                    "\(characteristic()) takes at most \(CharacteristicMetadata.absoluteMaxDataLength) bytes of data, not \(bytes.count)"
                )
            }
        case (.string, .string(let text)):
            try checkLength(text, metadata, characteristic)
        case (.float, .float(let number)):
            try checkRange(number, metadata, characteristic, value)
            try checkStep(number, metadata, characteristic, value)
        case (.float, .int(let integer)):
            try checkRange(Double(integer), metadata, characteristic, value)
            try checkStep(Double(integer), metadata, characteristic, value)
        case (let format, .int(let integer)) where format.integerRange != nil:
            try checkInteger(integer, format: format, metadata, characteristic, value)
        default:
            throw HomeServiceError(
                .invalidValueType,
                "\(characteristic()) takes a \(metadata.format.rawValue) value, not \(value) (\(kind(of: value)))"
            )
        }
    }

    private static func checkInteger(
        _ integer: Int64,
        format: CharacteristicFormat,
        _ metadata: CharacteristicMetadata,
        _ characteristic: () -> String,
        _ value: CharacteristicValue
    ) throws(HomeServiceError) {
        if let range = format.integerRange {
            if integer < range.lowerBound { throw below(value, Double(range.lowerBound), characteristic) }
            if integer > range.upperBound { throw above(value, Double(range.upperBound), characteristic) }
        }
        try checkRange(Double(integer), metadata, characteristic, value)
        try checkStep(Double(integer), metadata, characteristic, value)
        if let valid = metadata.validValues, !valid.contains(integer) {
            throw HomeServiceError(
                .invalidParameter,
                "\(characteristic()) does not accept \(value); valid values are \(valid.map(String.init).joined(separator: ", "))"
            )
        }
    }

    private static func checkRange(
        _ number: Double,
        _ metadata: CharacteristicMetadata,
        _ characteristic: () -> String,
        _ value: CharacteristicValue
    ) throws(HomeServiceError) {
        guard number.isFinite else {
            throw HomeServiceError(.invalidValueType, "\(characteristic()) takes a finite number, not \(value)")
        }
        if let minimum = metadata.minimumValue, number < minimum { throw below(value, minimum, characteristic) }
        if let maximum = metadata.maximumValue, number > maximum { throw above(value, maximum, characteristic) }
    }

    private static func checkStep(
        _ number: Double,
        _ metadata: CharacteristicMetadata,
        _ characteristic: () -> String,
        _ value: CharacteristicValue
    ) throws(HomeServiceError) {
        guard let step = metadata.stepValue, step > 0 else { return }
        let steps = (number - (metadata.minimumValue ?? 0)) / step
        guard abs(steps - steps.rounded()) <= stepTolerance * max(1, abs(steps)) else {
            throw HomeServiceError(
                .invalidParameter,
                "\(characteristic()) value \(value) is not a multiple of its step \(step) from \(metadata.minimumValue ?? 0)"
            )
        }
    }

    private static func checkLength(
        _ text: String,
        _ metadata: CharacteristicMetadata,
        _ characteristic: () -> String
    ) throws(HomeServiceError) {
        let length = text.utf8.count
        let maxLength = min(
            metadata.maxLength ?? CharacteristicMetadata.defaultMaxLength,
            CharacteristicMetadata.absoluteMaxLength
        )
        if length > maxLength {
            throw HomeServiceError(
                .stringLongerThanMaximum,
                "\(characteristic()) takes at most \(maxLength) bytes of text, not \(length)"
            )
        }
        if let minLength = metadata.minLength, length < minLength {
            throw HomeServiceError(
                .stringShorterThanMinimum,
                "\(characteristic()) takes at least \(minLength) bytes of text, not \(length)"
            )
        }
    }

    private static func below(
        _ value: CharacteristicValue,
        _ minimum: Double,
        _ characteristic: () -> String
    ) -> HomeServiceError {
        HomeServiceError(
            .valueLowerThanMinimum,
            "\(characteristic()) value \(value) is below its minimum \(format(minimum))"
        )
    }

    private static func above(
        _ value: CharacteristicValue,
        _ maximum: Double,
        _ characteristic: () -> String
    ) -> HomeServiceError {
        HomeServiceError(
            .valueHigherThanMaximum,
            "\(characteristic()) value \(value) is above its maximum \(format(maximum))"
        )
    }

    /// Whole numbers without a trailing ".0".
    private static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    private static func kind(of value: CharacteristicValue) -> String {
        switch value {
        case .bool: "bool"
        case .int: "integer"
        case .float: "float"
        case .string: "string"
        case .data: "data"
        }
    }
}
