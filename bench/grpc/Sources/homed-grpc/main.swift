// homed-grpc: the home store behind grpc-swift-2, for bench/grpc-vs-homed.sh.
//
//   homed-grpc PORT DIRECTORY
//
// Opens a new store in DIRECTORY (an SQLite file, as homed's), writes the owner's token to
// DIRECTORY/owner.token, adds a home with one lamp (On, Brightness 50) and an action set "Scene"
// that writes Brightness, and serves, on 127.0.0.1:PORT over gRPC's HTTP/2 without TLS, the methods
// the comparison calls with homed's own names and messages:
//
//   home.v1.Health/Check                          SERVING, after the bearer token is checked
//   home.v1.HomeService/ReadCharacteristic        the cached value, through the same store call as
//                                                 homed's (membership, readable, blocked, the cache)
//   home.v1.HomeService/UpdateActionTargetValue   a durable write through the same store calls as
//                                                 homed's, answered once its commit is fsynced (the
//                                                 store's group commit, as in homed)
//
// Once serving it prints one line: `ready HOME CHARACTERISTIC ACTION-SET ACTION`, ids in hex. This is
// what a team would build instead of homed's own protocol and loop: grpc-swift-2's documented
// server (NIO's HTTP/2 transport, one event-loop thread) with the store behind a mutex, since
// gRPC's handlers run on Swift's concurrent executor. gRPC carries no per-connection principal, so
// every call presents its token; a checked token is remembered (a hash per call would be unfair to
// gRPC), as an authentication interceptor with a cache would.
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import GRPCProtobuf
import HomeAPI
import HomeProto
import HomeService
import NIOPosix
import SwiftProtobuf
import Synchronization

/// The store and the tokens already checked, behind one lock.
struct ServedState: ~Copyable {
    let store: HomeStore
    var accounts: [String: AccountID] = [:]

    /// The caller's account from its `authorization: Bearer TOKEN` metadata.
    mutating func account(_ metadata: Metadata) throws(RPCError) -> AccountID {
        guard let value = metadata[stringValues: "authorization"].first(where: { _ in true }),
            value.hasPrefix("Bearer ")
        else { throw RPCError(code: .unauthenticated, message: "a bearer token is required") }
        let token = String(value.dropFirst("Bearer ".count))
        if let known = accounts[token] { return known }
        guard let account = store.account(forToken: token) else {
            throw RPCError(code: .unauthenticated, message: "the token is not valid")
        }
        accounts[token] = account.id
        return account.id
    }
}

/// The state every handler shares (a class: a mutex cannot be copied into each handler).
final class SharedState: Sendable {
    let locked: Mutex<ServedState>
    init(_ state: consuming sending ServedState) { locked = Mutex(state) }
}

struct BenchService: RegistrableRPCService {
    let state: SharedState

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        register(
            "home.v1.Health",
            "Check",
            Home_V1_HealthCheckRequest.self,
            Home_V1_HealthCheckResponse.self,
            in: &router
        ) { _, _, _ in
            var response = Home_V1_HealthCheckResponse()
            response.status = .serving
            return response
        }
        register(
            "home.v1.HomeService",
            "ReadCharacteristic",
            Home_V1_ReadCharacteristicRequest.self,
            Home_V1_ReadCharacteristicResponse.self,
            in: &router
        ) { state, account, request in
            try Self.read(request, by: account, in: state.store)
        }
        router.registerHandler(
            forMethod: MethodDescriptor(
                fullyQualifiedService: "home.v1.HomeService",
                method: "UpdateActionTargetValue"
            ),
            deserializer: ProtobufDeserializer<Home_V1_UpdateActionTargetValueRequest>(),
            serializer: ProtobufSerializer<Home_V1_UpdateActionTargetValueResponse>()
        ) { [state] streamingRequest, _ in
            let request = try await ServerRequest(stream: streamingRequest)
            let response = try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<Home_V1_UpdateActionTargetValueResponse, any Error>) in
                state.locked.withLock { state in
                    let store = state.store
                    do {
                        let account = try state.account(request.metadata)
                        let (answer, ticket) = store.write {
                            () throws(RPCError) -> Home_V1_UpdateActionTargetValueResponse in
                            try Self.updateTarget(request.message, by: account, in: store)
                        }
                        // Answered once durable, as homed answers a mutation.
                        store.whenCommitted(ticket) { failure in
                            if let failure {
                                continuation.resume(throwing: RPCError(code: .dataLoss, message: "\(failure)"))
                            } else {
                                continuation.resume(with: answer.mapError { $0 as any Error })
                            }
                        }
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
            return StreamingServerResponse(single: ServerResponse(message: response))
        }
    }

    /// Registers a unary method whose `body` runs under the lock with the caller's account.
    private func register<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ service: String,
        _ method: String,
        _: Request.Type,
        _: Response.Type,
        in router: inout RPCRouter<some ServerTransport>,
        body: @escaping @Sendable (inout ServedState, AccountID, Request) throws -> Response
    ) {
        router.registerHandler(
            forMethod: MethodDescriptor(fullyQualifiedService: service, method: method),
            deserializer: ProtobufDeserializer<Request>(),
            serializer: ProtobufSerializer<Response>()
        ) { [state] streamingRequest, _ in
            let request = try await ServerRequest(stream: streamingRequest)
            let response = try state.locked.withLock { state in
                try body(&state, try state.account(request.metadata), request.message)
            }
            return StreamingServerResponse(single: ServerResponse(message: response))
        }
    }

    static func read(
        _ request: Home_V1_ReadCharacteristicRequest,
        by account: AccountID,
        in store: HomeStore
    ) throws(RPCError) -> Home_V1_ReadCharacteristicResponse {
        guard let home = UniqueIdentifier(bytes: request.homeID),
            let characteristic = UniqueIdentifier(bytes: request.characteristicID)
        else { throw RPCError(code: .invalidArgument, message: "ids are 16 bytes") }
        var memo: MembershipMemo?
        let reading: HomeStore.CachedReading
        do {
            reading = try store.readValue(
                CharacteristicID(characteristic),
                in: HomeID(home),
                as: account,
                memo: &memo
            )
        } catch {
            throw rpcError(error)
        }
        return Home_V1_ReadCharacteristicResponse(reading)
    }

    static func updateTarget(
        _ request: Home_V1_UpdateActionTargetValueRequest,
        by account: AccountID,
        in store: HomeStore
    ) throws(RPCError) -> Home_V1_UpdateActionTargetValueResponse {
        guard let actionSet = UniqueIdentifier(bytes: request.actionSetID),
            let action = UniqueIdentifier(bytes: request.actionID)
        else { throw RPCError(code: .invalidArgument, message: "ids are 16 bytes") }
        let value: CharacteristicValue
        do {
            value = try CharacteristicValue(request.targetValue, field: "target_value")
        } catch {
            throw rpcError(error.error)
        }
        do {
            try store.updateTargetValue(of: ActionID(action), in: ActionSetID(actionSet), to: value, as: account)
            var response = Home_V1_UpdateActionTargetValueResponse()
            response.actionSet = Home_V1_ActionSet(try store.actionSet(ActionSetID(actionSet), as: account))
            return response
        } catch {
            throw rpcError(error)
        }
    }

    /// A domain failure as gRPC status, through homed's own table of HomeKit codes to status codes
    /// (the numbers are gRPC's on both sides).
    static func rpcError(_ error: HomeServiceError) -> RPCError {
        let status = HomeKitStatus.statusCode(for: error.code)
        let code = Status.Code(rawValue: Int(status.rawValue)).flatMap { RPCError.Code($0) } ?? .unknown
        return RPCError(code: code, message: "\(error)")
    }
}

/// Where the writer thread's commit reports go once the state exists (the store is opened first).
final class CommitRelay: Sendable {
    let target = Mutex<SharedState?>(nil)

    func handle(_ report: CommitReport) {
        target.withLock { $0 }?.locked.withLock { $0.store.handle(report) }
    }
}

func hex(_ id: UniqueIdentifier) -> String { id.bytes.map { String(format: "%02x", $0) }.joined() }

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: homed-grpc PORT DIRECTORY\n".utf8))
    exit(2)
}
let directory = arguments[2]
let relay = CommitRelay()
let store = try HomeStore.open(.file(path: directory + "/home.sqlite")) { report in relay.handle(report) }
guard let token = store.newOwnerToken, let owner = store.owner?.id else {
    FileHandle.standardError.write(Data("homed-grpc: \(directory) must not hold a store yet\n".utf8))
    exit(2)
}
try Data((token + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/owner.token"))
let home = try store.addHome(named: "Bench", as: owner)
let lamp = AccessoryDescription(
    name: "Lamp",
    category: 5,
    manufacturer: "Acme",
    model: "Bulb",
    services: [
        ServiceDescription(
            type: "00000043-0000-1000-8000-0026BB765291",
            characteristics: [
                CharacteristicDescription(type: "00000025-0000-1000-8000-0026BB765291", value: .bool(false)),
                CharacteristicDescription(type: "00000008-0000-1000-8000-0026BB765291", value: .int(50)),
            ]
        )
    ]
)
let accessory = try store.addAccessory(lamp, to: home.id, as: owner)[0]
let brightness = try store.service(accessory.services[0], as: owner).characteristics[1]
let scene = try store.addActionSet(named: "Scene", to: home.id, as: owner)
let action = CharacteristicWriteAction(characteristic: brightness, targetValue: .int(50))
try store.addAction(action, to: scene.id, as: owner)
if let failure = store.waitForCommits() { throw failure }
let shared = SharedState(ServedState(store: store))
relay.target.withLock { $0 = shared }

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let server = GRPCServer(
    transport: .http2NIOPosix(
        address: .ipv4(host: "127.0.0.1", port: port),
        transportSecurity: .plaintext,
        eventLoopGroup: group
    ),
    services: [BenchService(state: shared)]
)
try await withThrowingDiscardingTaskGroup { tasks in
    tasks.addTask { try await server.serve() }
    guard try await server.listeningAddress != nil else { return }
    FileHandle.standardOutput.write(
        Data("ready \(hex(home.id.raw)) \(hex(brightness.raw)) \(hex(scene.id.raw)) \(hex(action.id.raw))\n".utf8)
    )
}
