/// A domain rule was broken: the HomeKit code, and a message naming the object and value involved.
public struct HomeServiceError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: HomeKitErrorCode
    public var message: String

    public init(_ code: HomeKitErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.name) (\(code.rawValue)): \(message)" }
}
