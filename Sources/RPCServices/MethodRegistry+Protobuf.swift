public import RPCServer
public import SwiftProtobuf
import Wire

extension MethodRegistry {
    /// Registers a unary method with protobuf request and response types: an undecodable request
    /// fails with INVALID_ARGUMENT before `handler` runs.
    /// The handler answers with ``RPCServer/ServerCall/respond(with:)``, now or later.
    public mutating func registerUnary<Request: SwiftProtobuf.Message>(
        _ name: String,
        request: Request.Type,
        handler: @escaping (ServerCall, Request) -> Void
    ) {
        register(name, kind: .unary, handler: Self.decoding(Request.self, handler))
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
        register(name, kind: .serverStreaming, handler: Self.decoding(Request.self, handler))
    }

    private static func decoding<Request: SwiftProtobuf.Message>(
        _: Request.Type,
        _ handler: @escaping (ServerCall, Request) -> Void
    ) -> CallHandler {
        { call, bytes in
            guard let request = try? Request(serializedBytes: bytes) else {
                call.fail(CallStatus(code: .invalidArgument, message: "cannot decode \(Request.protoMessageName)"))
                return
            }
            handler(call, request)
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
