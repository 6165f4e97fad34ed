/// A characteristic's value as clients send it and the cache holds it.
public enum CharacteristicValue: Hashable, Sendable, CustomStringConvertible {
    case bool(Bool)
    /// Any integer that fits `Int64`, whatever the characteristic's integer format.
    case int(Int64)
    /// An integer above `Int64.max`, which only `uint64` (and `float`) characteristics take. Smaller
    /// integers are always ``int(_:)``, so that one number has one value (see ``integer(_:)``).
    case unsigned(UInt64)
    case float(Double)
    case string(String)
    /// `tlv8` and `data` formats.
    case data([UInt8])

    /// The value of an unsigned integer: ``int(_:)`` when it fits, else ``unsigned(_:)``.
    public static func integer(_ value: UInt64) -> CharacteristicValue {
        if let signed = Int64(exactly: value) { .int(signed) } else { .unsigned(value) }
    }

    public var description: String {
        switch self {
        case .bool(let value): "\(value)"
        case .int(let value): "\(value)"
        case .unsigned(let value): "\(value)"
        case .float(let value): "\(value)"
        case .string(let value): "\"\(value)\""
        case .data(let bytes): "\(bytes.count) bytes"
        }
    }
}
