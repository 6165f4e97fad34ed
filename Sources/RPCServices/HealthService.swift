public import HomeProto
public import RPCServer
import Wire

/// `home.v1.Health/Check`, after grpc.health.v1: SERVING while the server accepts calls,
/// NOT_SERVING while it drains; an unknown service name fails with NOT_FOUND.
public final class HealthService {
    public static let checkMethod = "home.v1.Health/Check"

    /// Service names the check answers for; the empty name is the server as a whole.
    private var statuses: [String: Home_V1_HealthCheckResponse.ServingStatus] = ["": .serving]

    public init() {}

    /// Sets the status reported for `service` ("" for the whole server).
    public func setStatus(_ status: Home_V1_HealthCheckResponse.ServingStatus, for service: String = "") {
        statuses[service] = status
    }

    /// Reports NOT_SERVING for everything, as when the server begins to drain.
    public func markAllNotServing() {
        for service in statuses.keys { statuses[service] = .notServing }
    }

    /// Registers the method; the registry's handler keeps this service alive.
    public func register(in registry: inout MethodRegistry) {
        registry.registerUnary(
            Self.checkMethod,
            request: Home_V1_HealthCheckRequest.self
        ) { call, request in
            guard let status = self.statuses[request.service] else {
                call.fail(CallStatus(code: .notFound, message: "unknown service \(request.service)"))
                return
            }
            var response = Home_V1_HealthCheckResponse()
            response.status = status
            call.respond(with: response)
        }
    }
}
