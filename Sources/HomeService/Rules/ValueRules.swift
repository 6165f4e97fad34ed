/// Checks a value written to a characteristic against its format and metadata
/// (docs/HOMEKIT.md, "Characteristics").
public enum ValueRules {
    /// How close a step times a power of ten must come to a whole number to count as having that
    /// many decimals (0.1 × 10 is exactly 1, but 0.7 × 10 is 7.000000000000001).
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
        // The rules first, the words only for a refusal: handed down to each check, the name's
        // closure had its context (the characteristic's kind) retained four times a write.
        guard let violation = violation(of: value, against: metadata) else { return }
        throw violation.error(characteristic: characteristic(), value: value)
    }

    /// How a value breaks its metadata's rules, worded once the characteristic's name is known.
    private enum Violation {
        case wrongType(CharacteristicFormat)
        case notFinite
        case below(Double)
        case above(Double)
        case offStep(Double, from: Double)
        case notValid([Int64])
        case dataTooLong(Int)
        case textTooLong(Int, maximum: Int)
        case textTooShort(Int, minimum: Int)

        func error(characteristic: String, value: CharacteristicValue) -> HomeServiceError {
            switch self {
            case .wrongType(let format):
                HomeServiceError(
                    .invalidValueType,
                    "\(characteristic) takes a \(format.rawValue) value, not \(value) (\(kind(of: value)))"
                )
            case .notFinite:
                HomeServiceError(.invalidValueType, "\(characteristic) takes a finite number, not \(value)")
            case .below(let minimum):
                HomeServiceError(
                    .valueLowerThanMinimum,
                    "\(characteristic) value \(value) is below its minimum \(format(minimum))"
                )
            case .above(let maximum):
                HomeServiceError(
                    .valueHigherThanMaximum,
                    "\(characteristic) value \(value) is above its maximum \(format(maximum))"
                )
            case .offStep(let step, let origin):
                HomeServiceError(
                    .invalidParameter,
                    "\(characteristic) value \(value) is not a multiple of its step \(step) from \(origin)"
                )
            case .notValid(let valid):
                HomeServiceError(
                    .invalidParameter,
                    "\(characteristic) does not accept \(value); valid values are \(valid.map(String.init).joined(separator: ", "))"
                )
            case .dataTooLong(let count):
                HomeServiceError(
                    .stringLongerThanMaximum,
                    "\(characteristic) takes at most \(CharacteristicMetadata.absoluteMaxDataLength) bytes of data, not \(count)"
                )
            case .textTooLong(let length, let maximum):
                HomeServiceError(
                    .stringLongerThanMaximum,
                    "\(characteristic) takes at most \(maximum) bytes of text, not \(length)"
                )
            case .textTooShort(let length, let minimum):
                HomeServiceError(
                    .stringShorterThanMinimum,
                    "\(characteristic) takes at least \(minimum) bytes of text, not \(length)"
                )
            }
        }
    }

    private static func violation(of value: CharacteristicValue, against metadata: CharacteristicMetadata) -> Violation?
    {
        switch (metadata.format, value) {
        case (.bool, .bool):
            return nil
        case (.tlv8, .data(let bytes)), (.data, .data(let bytes)):
            return bytes.count <= CharacteristicMetadata.absoluteMaxDataLength ? nil : .dataTooLong(bytes.count)
        case (.string, .string(let text)):
            return lengthViolation(text, metadata)
        case (.float, .float(let number)):
            return rangeViolation(number, metadata) ?? stepViolation(number, metadata)
        case (.float, .int(let integer)):
            return rangeViolation(Double(integer), metadata) ?? stepViolation(Double(integer), metadata)
        case (let format, .int(let integer)) where format.integerRange != nil:
            return integerViolation(integer, format: format, metadata)
        case (.float, .unsigned(let integer)), (.uint64, .unsigned(let integer)):
            if let violation = rangeViolation(Double(integer), metadata) ?? stepViolation(Double(integer), metadata) {
                return violation
            }
            // Valid values are listed as Int64: a larger number is none of them.
            if let valid = metadata.validValues { return .notValid(valid) }
            return nil
        case (let format, .unsigned) where format.integerRange != nil:
            return .above(Double(format.integerRange!.upperBound))
        default:
            return .wrongType(metadata.format)
        }
    }

    private static func integerViolation(
        _ integer: Int64,
        format: CharacteristicFormat,
        _ metadata: CharacteristicMetadata
    ) -> Violation? {
        if let range = format.integerRange {
            if integer < range.lowerBound { return .below(Double(range.lowerBound)) }
            if integer > range.upperBound { return .above(Double(range.upperBound)) }
        }
        if let violation = rangeViolation(Double(integer), metadata) ?? stepViolation(Double(integer), metadata) {
            return violation
        }
        if let valid = metadata.validValues, !valid.contains(integer) { return .notValid(valid) }
        return nil
    }

    private static func rangeViolation(_ number: Double, _ metadata: CharacteristicMetadata) -> Violation? {
        guard number.isFinite else { return .notFinite }
        if let minimum = metadata.minimumValue, number < minimum { return .below(minimum) }
        if let maximum = metadata.maximumValue, number > maximum { return .above(maximum) }
        return nil
    }

    /// A number is on the grid when it is a grid point as written in the step's decimals: 21.3 for
    /// 10 + 113 × 0.1 (21.299999999999997 in binary arithmetic). Anything else is refused, however
    /// close (HomeKit: "values must be on the step grid"); nothing is rounded on the caller's behalf.
    private static func stepViolation(_ number: Double, _ metadata: CharacteristicMetadata) -> Violation? {
        guard let step = metadata.stepValue, step > 0 else { return nil }
        let origin = metadata.minimumValue ?? 0
        let nearest = origin + ((number - origin) / step).rounded() * step
        return gridPoint(nearest, step: step) == number ? nil : .offStep(step, from: origin)
    }

    /// `point` rounded to the decimals of `step` (0 for a whole step, 1 for 0.1, 2 for 0.25, ...);
    /// unchanged for a step with more than nine decimals, or where the scaling would overflow.
    static func gridPoint(_ point: Double, step: Double) -> Double {
        var scale = 1.0
        for _ in 0...9 {
            let scaledStep = step * scale
            if abs(scaledStep - scaledStep.rounded()) <= stepTolerance * scaledStep {
                let scaled = (point * scale).rounded() / scale
                return scaled.isFinite ? scaled : point
            }
            scale *= 10
        }
        return point
    }

    private static func lengthViolation(_ text: String, _ metadata: CharacteristicMetadata) -> Violation? {
        let length = text.utf8.count
        let maxLength = min(
            metadata.maxLength ?? CharacteristicMetadata.defaultMaxLength,
            CharacteristicMetadata.absoluteMaxLength
        )
        if length > maxLength { return .textTooLong(length, maximum: maxLength) }
        if let minLength = metadata.minLength, length < minLength { return .textTooShort(length, minimum: minLength) }
        return nil
    }

    /// Whole numbers without a trailing ".0".
    private static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    private static func kind(of value: CharacteristicValue) -> String {
        switch value {
        case .bool: "bool"
        case .int, .unsigned: "integer"
        case .float: "float"
        case .string: "string"
        case .data: "data"
        }
    }
}
