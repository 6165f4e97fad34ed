/// A value SQLite stores: one of its five storage classes.
public enum SQLValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    public var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    public var blob: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }
}
