import HomeProto
public import SwiftProtobuf

/// Every method with its request and response message types, for generic callers (`rpc-client
/// call`, tools that take JSON): ``all`` is generated from the services of proto/home/v1.
public enum MethodTypes {
    /// One method's name and message types.
    public struct Entry: Sendable {
        /// The full name, e.g. `home.v1.HomeService/AddRoom`.
        public let name: String
        /// The request message's type.
        public let request: any SwiftProtobuf.Message.Type
        /// The response message's type (of each message, for a stream).
        public let response: any SwiftProtobuf.Message.Type
        /// Whether the server answers with a stream of `response` messages.
        public var isStreaming = false
    }

    // `all`, every declared method, is generated from proto/home/v1 (Generated/MethodTypes+Generated.swift).

    /// The entry for a full method name.
    public static func named(_ name: String) -> Entry? {
        all.first { $0.name == name }
    }
}
