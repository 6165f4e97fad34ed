public import RPCServer
public import SwiftProtobuf
import Wire

extension MethodRegistry {
    /// Registers a unary method with protobuf request and response types: an undecodable request
    /// fails with INVALID_ARGUMENT before `handler` runs.
    /// The handler answers with ``RPCServer/ServerCall/respond(with:)``, now or later.
    ///
    /// `shortcut`, if given, sees the request's bytes before they are decoded and returns whether
    /// it answered the call itself (a common request shape read without the generated decoder).
    public mutating func registerUnary<Request: SwiftProtobuf.Message>(
        _ name: String,
        request: Request.Type,
        shortcut: ((ServerCall, ArraySlice<UInt8>) -> Bool)? = nil,
        handler: @escaping (ServerCall, Request) -> Void
    ) {
        registerUnary(name, request: request, shortcut: shortcut) { call, request, _ in handler(call, request) }
    }

    /// ``registerUnary(_:request:shortcut:handler:)`` with a handler that also gets the request's
    /// bytes as received (an idempotency key's record is kept under their digest).
    public mutating func registerUnary<Request: SwiftProtobuf.Message>(
        _ name: String,
        request: Request.Type,
        shortcut: ((ServerCall, ArraySlice<UInt8>) -> Bool)? = nil,
        handler: @escaping (ServerCall, Request, ArraySlice<UInt8>) -> Void
    ) {
        let decoding = Self.decoding(Request.self, handler)
        guard let shortcut else {
            register(name, kind: .unary, handler: decoding)
            return
        }
        register(name, kind: .unary) { call, bytes in
            if !shortcut(call, bytes) { decoding(call, bytes) }
        }
    }

    /// Registers a server-streaming method with a protobuf request type: an undecodable request
    /// fails with INVALID_ARGUMENT before `handler` runs. The handler sends with
    /// ``RPCServer/ServerCall/send(_:)`` under the client's credit and ends with
    /// ``RPCServer/ServerCall/finish(_:)``.
    public mutating func registerServerStreaming<Request: SwiftProtobuf.Message>(
        _ name: String,
        request: Request.Type,
        handler: @escaping (ServerCall, Request) -> Void
    ) {
        register(
            name,
            kind: .serverStreaming,
            handler: Self.decoding(Request.self) { call, request, _ in handler(call, request) }
        )
    }

    /// Registers a bidirectional method (gRPC door only): `handler` runs for each request message,
    /// decoded (one that does not decode fails the call with INVALID_ARGUMENT).
    public mutating func registerBidirectionalStreaming<Request: SwiftProtobuf.Message>(
        _ name: String,
        request: Request.Type,
        handler: @escaping (ServerCall, Request) -> Void
    ) {
        register(
            name,
            kind: .bidirectionalStreaming,
            handler: Self.decoding(Request.self) { call, request, _ in handler(call, request) }
        )
    }

    private static func decoding<Request: SwiftProtobuf.Message>(
        _: Request.Type,
        _ handler: @escaping (ServerCall, Request, ArraySlice<UInt8>) -> Void
    ) -> CallHandler {
        { call, bytes in
            // An empty message is the default one (a health check's, a listing's): skip the decoder.
            guard let request = bytes.isEmpty ? Request() : try? Request(serializedBytes: Array(bytes)) else {
                call.fail(CallStatus(code: .invalidArgument, message: "cannot decode \(Request.protoMessageName)"))
                return
            }
            handler(call, request, bytes)
        }
    }
}

extension ServerCall {
    /// Answers a unary call with a protobuf message and status OK.
    public func respond(with response: some SwiftProtobuf.Message) {
        do {
            respond(try response.encodedBytes())
        } catch {
            fail(CallStatus(code: .internal, message: "cannot encode \(type(of: response).protoMessageName): \(error)"))
        }
    }
}
