/// What a characteristic's values may be (HomeKit's `HMCharacteristicMetadata`, plus the format).
public struct CharacteristicMetadata: Hashable, Sendable {
    /// A string's length limit when the metadata gives none.
    public static let defaultMaxLength = 64
    /// The most any string characteristic may hold.
    public static let absoluteMaxLength = 256
    /// The most bytes any data or TLV8 characteristic may hold.
    public static let absoluteMaxDataLength = 65_536

    public var format: CharacteristicFormat
    /// `celsius`, `percentage`, `arcdegrees`, `lux` or `seconds`.
    public var units: String?
    public var minimumValue: Double?
    public var maximumValue: Double?
    /// Values must lie on the grid `minimumValue + k × stepValue` (from 0 without a minimum).
    public var stepValue: Double?
    /// For strings: UTF-8 bytes at most (``defaultMaxLength`` when `nil`).
    public var maxLength: Int?
    /// For strings: UTF-8 bytes at least.
    public var minLength: Int?
    /// For integer formats: the only values allowed, when given.
    public var validValues: [Int64]?
    public var manufacturerDescription: String?

    public init(
        format: CharacteristicFormat,
        units: String? = nil,
        minimumValue: Double? = nil,
        maximumValue: Double? = nil,
        stepValue: Double? = nil,
        maxLength: Int? = nil,
        minLength: Int? = nil,
        validValues: [Int64]? = nil,
        manufacturerDescription: String? = nil
    ) {
        self.format = format
        self.units = units
        self.minimumValue = minimumValue
        self.maximumValue = maximumValue
        self.stepValue = stepValue
        self.maxLength = maxLength
        self.minLength = minLength
        self.validValues = validValues
        self.manufacturerDescription = manufacturerDescription
    }
}
