public import HomeProto
public import RPCServer
import Wire

/// `home.v1.Health/Check`, after grpc.health.v1: SERVING while the server accepts calls,
/// NOT_SERVING while it drains (or once the server says it cannot serve, as `homed` does after a
/// failed commit); an unknown service name fails with NOT_FOUND.
public final class HealthService {
    public static let checkMethod = "home.v1.Health/Check"

    /// Service names the check answers for (the empty name is the server as a whole), each with
    /// its response already encoded: a health check is the cheapest call there is, and encoding
    /// the same two-byte message again cost more than the rest of the handler.
    private var responses: [String: [UInt8]] = [:]
    /// The response for the whole server (the empty name), which nearly every check asks for: kept
    /// apart so that such a check hashes no string.
    private var serverResponse: [UInt8] = []

    public init() {
        setStatus(.serving)
    }

    /// Sets the status reported for `service` ("" for the whole server).
    public func setStatus(_ status: Home_V1_HealthCheckResponse.ServingStatus, for service: String = "") {
        var response = Home_V1_HealthCheckResponse()
        response.status = status
        // Encoding a message of one enum field cannot fail.
        let encoded = (try? response.encodedBytes()) ?? []
        responses[service] = encoded
        if service.isEmpty { serverResponse = encoded }
    }

    /// Reports SERVING for each service with a method in `registry`, by its name
    /// (`home.v1.HomeService`): grpc.health.v1 clients ask for the service they use. Call it once
    /// every method is registered.
    public func markServing(servicesIn registry: MethodRegistry) {
        for service in Set(registry.methodNames.map { $0.prefix { $0 != "/" } }) {
            setStatus(.serving, for: String(service))
        }
    }

    /// Reports NOT_SERVING for everything, as when the server begins to drain.
    public func markAllNotServing() {
        for service in responses.keys { setStatus(.notServing, for: service) }
    }

    /// Registers the method; the registry's handler keeps this service alive.
    public func register(in registry: inout MethodRegistry) {
        registry.registerUnary(
            Self.checkMethod,
            request: Home_V1_HealthCheckRequest.self
        ) { call, request in
            if request.service.isEmpty {
                call.respond(self.serverResponse)
                return
            }
            guard let response = self.responses[request.service] else {
                call.fail(CallStatus(code: .notFound, message: "unknown service \(request.service)"))
                return
            }
            call.respond(response)
        }
    }
}
