/// Handles one call: runs on the loop thread with the request message, and answers through the call,
/// now or later (after a commit, after an accessory replies). The request's bytes lie in the
/// connection's input buffer, not copied: copy them (`Array(request)`) to keep them past the handler.
public typealias CallHandler = (ServerCall, ArraySlice<UInt8>) -> Void

/// The dispatch table: full method name (`home.v1.HomeService/AddRoom`) to its kind and handler.
public struct MethodRegistry {
    /// How a method answers.
    public enum Kind: Sendable {
        /// One response message, then the status.
        case unary
        /// Any number of response messages under flow control, then the status.
        case serverStreaming
        /// Any number of request messages, each handed to the handler as it arrives
        /// (``ServerCall/onRequestsEnded`` runs when the client is done), and any number of
        /// responses: served on the gRPC door only (our protocol carries one request a call).
        case bidirectionalStreaming
    }

    /// A class: a call's lookup copies one reference instead of a name and a closure.
    final class Method {
        let name: String
        /// Position in registration order; metrics are kept in an array by it.
        let index: Int
        let kind: Kind
        let handler: CallHandler

        init(name: String, index: Int, kind: Kind, handler: @escaping CallHandler) {
            self.name = name
            self.index = index
            self.kind = kind
            self.handler = handler
        }
    }

    private(set) var methods: [String: Method] = [:]

    public init() {}

    /// Registers `handler` for `name`; registering a name twice is a programmer error.
    public mutating func register(_ name: String, kind: Kind, handler: @escaping CallHandler) {
        precondition(methods[name] == nil, "method \(name) registered twice")
        methods[name] = Method(name: name, index: methods.count, kind: kind, handler: handler)
    }

    /// Every registered method name, sorted.
    public var methodNames: [String] { methods.keys.sorted() }

    /// Method names by index.
    var namesByIndex: [String] {
        methods.values.sorted { $0.index < $1.index }.map(\.name)
    }

    func method(named name: String) -> Method? {
        methods[name]
    }
}
