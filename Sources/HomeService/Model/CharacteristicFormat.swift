/// How a characteristic's value is encoded (HAP's `format`).
public enum CharacteristicFormat: String, CaseIterable, Sendable {
    case bool
    case uint8
    case uint16
    case uint32
    case uint64
    /// Signed 32-bit.
    case int
    case float
    /// UTF-8; at most ``CharacteristicMetadata/defaultMaxLength`` bytes unless the metadata says
    /// otherwise, never more than ``CharacteristicMetadata/absoluteMaxLength``.
    case string
    case tlv8
    case data

    /// The range an integer format can hold; `nil` for other formats.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .uint8: 0...Int64(UInt8.max)
        case .uint16: 0...Int64(UInt16.max)
        case .uint32: 0...Int64(UInt32.max)
        // The signed part: larger values are ``CharacteristicValue/unsigned(_:)``.
        case .uint64: 0...Int64.max
        case .int: Int64(Int32.min)...Int64(Int32.max)
        case .bool, .float, .string, .tlv8, .data: nil
        }
    }
}

/// What may be done with a characteristic (HAP's `perms`).
public struct CharacteristicProperties: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `pr`
    public static let readable = CharacteristicProperties(rawValue: 1 << 0)
    /// `pw`
    public static let writable = CharacteristicProperties(rawValue: 1 << 1)
    /// `ev`
    public static let supportsEventNotification = CharacteristicProperties(rawValue: 1 << 2)
    /// `aa`: writes need additional authorization data.
    public static let requiresAuthorizationData = CharacteristicProperties(rawValue: 1 << 3)
    /// `tw`
    public static let timedWrite = CharacteristicProperties(rawValue: 1 << 4)
    /// `hd`: not shown to users.
    public static let hidden = CharacteristicProperties(rawValue: 1 << 5)
    /// `wr`
    public static let writeResponse = CharacteristicProperties(rawValue: 1 << 6)
}
