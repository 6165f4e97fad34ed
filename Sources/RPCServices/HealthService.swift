public import HomeProto
public import RPCServer
public import Wire

/// `home.v1.Health/Check`, and the standard `grpc.health.v1.Health` (Check and Watch) whose
/// messages are the same on the wire: SERVING while the server accepts calls, NOT_SERVING while it
/// drains (or once the server says it cannot serve, as `homed` does after a failed commit). Check
/// on an unknown service name fails with NOT_FOUND; Watch on one reports SERVICE_UNKNOWN, and then
/// every change of the status until the call ends.
public final class HealthService {
    public static let checkMethod = "home.v1.Health/Check"
    public static let standardCheckMethod = "grpc.health.v1.Health/Check"
    public static let standardWatchMethod = "grpc.health.v1.Health/Watch"
    /// The methods probes call without a token.
    public static let methods = [checkMethod, standardCheckMethod, standardWatchMethod]

    /// Service names the check answers for (the empty name is the server as a whole), each with
    /// its response already encoded: a health check is the cheapest call there is, and encoding
    /// the same two-byte message again cost more than the rest of the handler.
    private var responses: [String: [UInt8]] = [:]
    /// The response for the whole server (the empty name), which nearly every check asks for: kept
    /// apart so that such a check hashes no string.
    private var serverResponse: [UInt8] = []
    /// Open Watch calls, each with the service it watches and whether a status waits to be sent
    /// (the call was not writable when it changed: only the latest is sent).
    private var watchers: [ObjectIdentifier: (call: ServerCall, service: String)] = [:]

    public init() {
        setStatus(.serving)
    }

    /// Sets the status reported for `service` ("" for the whole server).
    public func setStatus(_ status: Home_V1_HealthCheckResponse.ServingStatus, for service: String = "") {
        var response = Home_V1_HealthCheckResponse()
        response.status = status
        // Encoding a message of one enum field cannot fail.
        let encoded = (try? response.encodedBytes()) ?? []
        let changed = responses[service] != encoded
        responses[service] = encoded
        if service.isEmpty { serverResponse = encoded }
        guard changed else { return }
        for watcher in watchers.values where watcher.service == service { sendLatest(to: watcher.call, service) }
    }

    private static let unknownServiceResponse: [UInt8] = {
        var response = Home_V1_HealthCheckResponse()
        response.status = .serviceUnknown
        return (try? response.encodedBytes()) ?? []
    }()

    /// Sends `service`'s status to a Watch call now, or when the call can take it.
    private func sendLatest(to call: ServerCall, _ service: String) {
        let response = responses[service] ?? Self.unknownServiceResponse
        if !call.send(response) {
            call.onWritable = { [unowned self, unowned call] in self.sendLatest(to: call, service) }
        }
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
        for method in [Self.checkMethod, Self.standardCheckMethod] {
            registry.registerUnary(method, request: Home_V1_HealthCheckRequest.self) { call, request in
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
        registry.registerServerStreaming(Self.standardWatchMethod, request: Home_V1_HealthCheckRequest.self) {
            call,
            request in
            let key = ObjectIdentifier(call)
            self.watchers[key] = (call, request.service)
            call.onCancel = { [unowned self] in self.watchers[key] = nil }
            self.sendLatest(to: call, request.service)
        }
    }

    /// Ends every Watch call with `status` (the server is draining: watchers see NOT_SERVING first).
    public func endWatches(_ status: CallStatus) {
        let open = watchers.values.map(\.call)
        watchers = [:]
        for call in open { call.finish(status) }
    }
}
