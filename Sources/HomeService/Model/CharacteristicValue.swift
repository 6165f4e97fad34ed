/// A characteristic's value as clients send it and the cache holds it.
public enum CharacteristicValue: Hashable, Sendable, CustomStringConvertible {
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    /// `tlv8` and `data` formats.
    case data([UInt8])

    public var description: String {
        switch self {
        case .bool(let value): "\(value)"
        case .int(let value): "\(value)"
        case .float(let value): "\(value)"
        case .string(let value): "\"\(value)\""
        case .data(let bytes): "\(bytes.count) bytes"
        }
    }
}
