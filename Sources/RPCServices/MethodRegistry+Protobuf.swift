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
        register(name, kind: .unary) { call, bytes in
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
            respond(try response.serializedBytes())
        } catch {
            fail(CallStatus(code: .internal, message: "cannot encode \(type(of: response).protoMessageName): \(error)"))
        }
    }
}
