import Foundation
import HomeProto
public import RPCServer
import SwiftProtobuf
import Wire

/// gRPC server reflection (`grpc.reflection.v1.ServerReflection/ServerReflectionInfo`, and the same
/// under `grpc.reflection.v1alpha` for older clients), on the gRPC door: generic clients (grpcurl,
/// grpcio-reflection, Postman) list the services and fetch their descriptors, then call any method
/// with no .proto files. Each request on the stream gets one response, in order.
public final class ReflectionService {
    public static let methods = [
        "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    ]

    /// Each file's serialized FileDescriptorProto, by file name.
    private var files: [String: Data] = [:]
    /// Each file's imports, by file name.
    private var imports: [String: [String]] = [:]
    /// The file defining each fully-qualified symbol: packages' messages (nested too), enums,
    /// services and their methods.
    private var fileBySymbol: [String: String] = [:]
    /// The services to list: those of the registry the service is registered in, and itself.
    private var serviceNames: [String] = []

    /// - Parameter descriptorSet: a serialized google.protobuf.FileDescriptorSet of every file whose
    ///   services are served (``HomeProto/ProtoDescriptors``).
    public init(descriptorSet: [UInt8]) throws {
        let set = try Google_Protobuf_FileDescriptorSet(serializedBytes: descriptorSet)
        for file in set.file {
            files[file.name] = try file.serializedData()
            imports[file.name] = file.dependency
            let prefix = file.package.isEmpty ? "" : file.package + "."
            for message in file.messageType { index(message, prefix: prefix, in: file.name) }
            for enumeration in file.enumType { fileBySymbol[prefix + enumeration.name] = file.name }
            for service in file.service {
                fileBySymbol[prefix + service.name] = file.name
                for method in service.method { fileBySymbol[prefix + service.name + "." + method.name] = file.name }
            }
        }
    }

    private func index(_ message: Google_Protobuf_DescriptorProto, prefix: String, in file: String) {
        let name = prefix + message.name
        fileBySymbol[name] = file
        for nested in message.nestedType { index(nested, prefix: name + ".", in: file) }
        for enumeration in message.enumType { fileBySymbol[name + "." + enumeration.name] = file }
    }

    /// Registers the methods, listing every service `registry` has by then (register this last).
    public func register(in registry: inout MethodRegistry) {
        let served = Set((registry.methodNames + Self.methods).map { String($0.prefix { $0 != "/" }) })
        serviceNames = served.sorted()
        for method in Self.methods {
            registry.registerBidirectionalStreaming(method, request: Grpc_Reflection_V1_ServerReflectionRequest.self) {
                call,
                request in
                var response = self.answer(request)
                response.validHost = request.host
                response.originalRequest = request
                do {
                    call.send(try response.serializedBytes())
                } catch {
                    call.fail(CallStatus(code: .internal, message: "cannot encode the reflection response: \(error)"))
                }
            }
        }
    }

    func answer(_ request: Grpc_Reflection_V1_ServerReflectionRequest) -> Grpc_Reflection_V1_ServerReflectionResponse {
        var response = Grpc_Reflection_V1_ServerReflectionResponse()
        switch request.messageRequest {
        case .listServices:
            response.listServicesResponse.service = serviceNames.map { name in
                var service = Grpc_Reflection_V1_ServiceResponse()
                service.name = name
                return service
            }
        case .fileByFilename(let name):
            guard files[name] != nil else { return notFound("no file named \(name)") }
            response.fileDescriptorResponse.fileDescriptorProto = withImports(name)
        case .fileContainingSymbol(let symbol):
            guard let file = fileBySymbol[symbol] else { return notFound("no symbol named \(symbol)") }
            response.fileDescriptorResponse.fileDescriptorProto = withImports(file)
        case .fileContainingExtension(let request):
            return notFound("no extension \(request.extensionNumber) of \(request.containingType)")
        case .allExtensionNumbersOfType(let type):
            guard fileBySymbol[type] != nil else { return notFound("no type named \(type)") }
            response.allExtensionNumbersResponse.baseTypeName = type
        case nil:
            var error = Grpc_Reflection_V1_ErrorResponse()
            error.errorCode = Int32(StatusCode.invalidArgument.rawValue)
            error.errorMessage = "the request names nothing to reflect on"
            response.errorResponse = error
        }
        return response
    }

    private func notFound(_ message: String) -> Grpc_Reflection_V1_ServerReflectionResponse {
        var response = Grpc_Reflection_V1_ServerReflectionResponse()
        response.errorResponse.errorCode = Int32(StatusCode.notFound.rawValue)
        response.errorResponse.errorMessage = message
        return response
    }

    /// `file` and every file it imports, directly or not, each once, `file` first.
    private func withImports(_ file: String) -> [Data] {
        var order: [String] = []
        var seen: Set<String> = []
        var pending = [file]
        while let next = pending.popLast() {
            guard seen.insert(next).inserted, files[next] != nil else { continue }
            order.append(next)
            pending.append(contentsOf: (imports[next] ?? []).reversed())
        }
        return order.compactMap { files[$0] }
    }
}
