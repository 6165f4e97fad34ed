/// A domain rule was broken: the HomeKit code, and a message naming the object and value involved.
public struct HomeServiceError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: HomeKitErrorCode
    public var message: String
    /// The request field at fault, when the rule that failed knows it better than its caller (a
    /// token request's name, homes or lifetime).
    public var field: String?

    public init(_ code: HomeKitErrorCode, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    public var description: String { "\(code.name) (\(code.rawValue)): \(message)" }
}
