public import Foundation
public import HomeProto
public import RPCClient
import Synchronization
public import UV
import Wire

/// A simulated accessory (HomeKit's Accessory Simulator): it advertises itself or attaches with its
/// credential, keeps its characteristics' values, applies the writes it accepts, answers reads and
/// identify requests, and can change values on its own. `rpc-client accessory simulate` runs these;
/// tests use them as real accessories.
///
/// Made with an endpoint, it keeps its own connection and, as a device does, links again when the
/// link ends or the server restarts: after 1 s, then twice as long each time up to 10 s, attaching
/// with its credential (advertising again if the pairing is gone), until ``stop()``. Many simulated
/// accessories may instead share one ``AccessoryLinkClient`` (each link is one stream of the
/// connection); then the link's owner starts them again on a new client. Commands are answered on
/// the connection's loop thread as they arrive; the rest of the link's messages come to the actor.
public actor SimulatedAccessory {
    /// What the accessory does with a write.
    public enum WriteBehaviour: Sendable, Equatable {
        /// Applies it and answers 0.
        case accept
        /// Answers with this HAP status (e.g. -70403 busy) and keeps its value.
        case refuse(hapStatus: Int32)
        /// Never answers (the controller gets 8 at its deadline).
        case ignore
    }

    /// The description as advertised; its ids are filled in once the server has answered.
    public private(set) var description: AccessoryDescription
    /// The code a controller gives to pair it.
    public nonisolated let setupCode: String
    /// Set once paired (or given, to attach).
    public private(set) var credential: String?
    /// What it does with a write (``setWriteBehaviour(_:)``).
    public var writeBehaviour: WriteBehaviour { commandState.withLock { $0.writeBehaviour } }
    /// Whether the accessory answers commands at all; a hung one (`false`) leaves every write, read
    /// and identify request to the controller's deadline (8).
    public var isResponsive: Bool { commandState.withLock { $0.isResponsive } }
    /// Each characteristic's current value, by id.
    public var values: [UUID: CharacteristicValue] { commandState.withLock { $0.values } }
    /// The latest writes applied, oldest first: at least the last ``recentWriteLimit`` of them (a
    /// simulator serving a load test for hours keeps no more).
    public var appliedWrites: [(characteristic: UUID, value: CharacteristicValue)] {
        commandState.withLock { $0.recentWrites.entries }
    }
    /// Writes applied since the accessory started.
    public var appliedWriteCount: Int { commandState.withLock { $0.recentWrites.total } }
    /// How many of the latest writes ``appliedWrites`` keeps.
    public static let recentWriteLimit = 1_000
    /// How many identify requests it answered.
    public var identifyCount: Int { commandState.withLock { $0.identifyCount } }
    /// Whether the link is open now.
    public private(set) var isLinked = false

    /// What answering a command reads and changes, kept under a lock: commands are answered on the
    /// link's loop thread, without a hop to the actor and back for each batch (the hops were most of
    /// a simulator's time under load, and the controller's write waits for them).
    private struct CommandState {
        var values: [UUID: CharacteristicValue]
        var recentWrites = RecentHistory<(characteristic: UUID, value: CharacteristicValue)>(limit: recentWriteLimit)
        var identifyCount = 0
        var writeBehaviour = WriteBehaviour.accept
        var isResponsive = true
        /// Called with every message the link brings (for a log).
        var onMessage: (@Sendable (LinkMessage) -> Void)?
    }

    /// A link message for the actor, or the link's end.
    private enum LinkEvent: Sendable {
        case message(LinkMessage)
        case ended(HomeClientError)
    }

    /// Where it connects, when it keeps its own connection (and reconnects).
    private struct OwnConnection {
        let endpoint: Endpoint
        let configuration: ClientConnection.Configuration
        let timeout: Duration?
    }

    private nonisolated let commandState: Mutex<CommandState>
    private let ownConnection: OwnConnection?
    /// The connection its link is on: given, or its own (`nil` while it has none).
    private var link: AccessoryLinkClient?
    private var linkCall: LinkCall?
    private var serving: Task<Void, Never>?
    private var startWaiter: CheckedContinuation<Void, any Error>?
    /// Links again after the link ended, for an accessory with its own connection.
    private var relinking: Task<Void, Never>?
    /// Set by ``stop()``: the link's end is not a reason to link again.
    private var isStopped = false
    /// How many times it linked again after its link ended.
    public private(set) var relinkCount = 0
    private var pairedWaiters: [CheckedContinuation<String, Never>] = []
    /// Called with the credential and the description (ids filled in) when a controller pairs the
    /// accessory: what it must keep to attach again.
    private var onPaired: (@Sendable (String, AccessoryDescription) -> Void)?

    /// An accessory linked on a connection it may share with others (its owner links it again
    /// when the connection drops).
    /// - Parameters:
    ///   - description: what it advertises: its services and characteristics (ids filled in once
    ///     advertised or, for a paired one, the ids it was paired with).
    ///   - setupCode: the code a controller must give to pair it (`XXX-XX-XXX`).
    ///   - credential: the credential from an earlier pairing: ``start()`` attaches instead of
    ///     advertising.
    ///   - link: the connection to homed's accessory face.
    public init(
        _ description: AccessoryDescription,
        setupCode: String,
        credential: String? = nil,
        link: AccessoryLinkClient
    ) {
        self.description = description
        self.setupCode = setupCode
        self.credential = credential
        self.link = link
        ownConnection = nil
        commandState = Mutex(CommandState(values: Self.initialValues(of: description)))
    }

    /// An accessory with a connection of its own, which links again whenever its link ends (the
    /// server restarted, the connection dropped) until ``stop()``.
    /// - Parameters:
    ///   - description: what it advertises, as for ``init(_:setupCode:credential:link:)``.
    ///   - setupCode: the code a controller must give to pair it (`XXX-XX-XXX`).
    ///   - credential: the credential from an earlier pairing: ``start()`` attaches instead of
    ///     advertising.
    ///   - endpoint: where homed listens.
    ///   - timeout: each unary call's deadline (its reports and answers).
    ///   - connection: the connection's settings.
    public init(
        _ description: AccessoryDescription,
        setupCode: String,
        credential: String? = nil,
        endpoint: Endpoint,
        timeout: Duration? = .seconds(30),
        connection: ClientConnection.Configuration = ClientConnection.Configuration()
    ) {
        self.description = description
        self.setupCode = setupCode
        self.credential = credential
        link = nil
        ownConnection = OwnConnection(endpoint: endpoint, configuration: connection, timeout: timeout)
        commandState = Mutex(CommandState(values: Self.initialValues(of: description)))
    }

    /// The accessory's identifier (the bridge's, for a bridge).
    public var id: UUID { UUID(data: description.id) ?? .random() }

    /// Calls `handler` with the credential and the description (ids filled in) once a controller
    /// pairs the accessory; keep the credential to attach again later.
    public func onPaired(_ handler: @escaping @Sendable (String, AccessoryDescription) -> Void) {
        onPaired = handler
    }

    /// Calls `handler` with every message the link brings (for a log).
    public func onMessage(_ handler: @escaping @Sendable (LinkMessage) -> Void) {
        commandState.withLock { $0.onMessage = handler }
    }

    /// Opens the link (advertising, or attaching with the credential) and serves it in the
    /// background; returns once the server accepted it. An accessory with its own connection
    /// connects first, and from then on links again by itself whenever the link ends.
    /// - Throws: the server's refusal (a bad description, an id already paired, a wrong credential),
    ///   or UNAVAILABLE when it cannot connect.
    public func start() async throws(HomeClientError) {
        isStopped = false
        try await openLink()
    }

    /// Connects if it keeps its own connection and has none, then opens the link.
    private func openLink() async throws(HomeClientError) {
        let link: AccessoryLinkClient
        if let current = self.link {
            link = current
        } else if let own = ownConnection {
            link = try await AccessoryLinkClient.connect(
                to: own.endpoint,
                timeout: own.timeout,
                connection: own.configuration
            )
            self.link = link
        } else {
            preconditionFailure("an accessory without its own connection always has its link")
        }
        let (events, continuation) = AsyncStream.makeStream(of: LinkEvent.self)
        // On the link's loop thread: commands are answered there, everything else goes to the actor
        // in order. The advertised description's values are taken here too, so that no command
        // that follows it can come before them.
        let onMessage: @Sendable (LinkMessage) -> Void = { message in
            switch message.kind {
            case .command(let command)?:
                self.perform(command, on: link)
                self.commandState.withLock { $0.onMessage }?(message)
            case .advertised(let advertised)?:
                let initial = Self.initialValues(of: advertised.accessory)
                self.commandState.withLock { $0.values.merge(initial) { current, _ in current } }
                continuation.yield(.message(message))
            default:
                continuation.yield(.message(message))
            }
        }
        let onEnd: @Sendable (HomeClientError?) -> Void = { error in
            continuation.yield(.ended(error ?? HomeClientError(status: .unavailable, message: "the link ended")))
            continuation.finish()
        }
        if let credential {
            let bridged = description.bridgedAccessories.compactMap { UUID(data: $0.id) }
            linkCall = try link.attach(
                id,
                credential: credential,
                bridging: bridged,
                onMessage: onMessage,
                onEnd: onEnd
            )
        } else {
            linkCall = try link.advertise(description, setupCode: setupCode, onMessage: onMessage, onEnd: onEnd)
        }
        serving = Task {
            for await event in events {
                switch event {
                case .message(let message): self.handle(message)
                case .ended(let error): self.linkEnded(error)
                }
            }
        }
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                startWaiter = continuation
            }
        } catch {
            // linkEnded(_:) resumes it with the link's failure, a HomeClientError.
            throw error as? HomeClientError ?? HomeClientError(status: .unknown, message: "\(error)")
        }
    }

    /// Closes the link (the accessory becomes unreachable, or leaves the browser); one with its own
    /// connection closes that too and stops linking again.
    public func stop() async {
        isStopped = true
        relinking?.cancel()
        await relinking?.value
        relinking = nil
        linkCall?.cancel()
        linkCall = nil
        await serving?.value
        serving = nil
        if ownConnection != nil {
            await link?.close()
            link = nil
        }
    }

    /// Waits until a controller has paired the accessory; returns its credential.
    public func paired() async -> String {
        if let credential { return credential }
        return await withCheckedContinuation { pairedWaiters.append($0) }
    }

    /// Changes a value on the accessory's own account (a switch pressed, a new reading) and reports it.
    /// - Parameters:
    ///   - characteristic: the characteristic's id.
    ///   - value: its new value.
    ///   - report: `false` changes it on the accessory only, as one that sends no events would: the
    ///     controller learns of it on its next fresh read.
    /// - Throws: UNAVAILABLE while it has no link (the value is changed on the accessory anyway).
    public func change(
        _ characteristic: UUID,
        to value: CharacteristicValue,
        report: Bool = true
    ) async throws(HomeClientError) {
        commandState.withLock { $0.values[characteristic] = value }
        guard report else { return }
        guard let link, isLinked else {
            throw HomeClientError(status: .unavailable, message: "the accessory is not linked")
        }
        try await link.report([(characteristic, value)])
    }

    /// The characteristic of `type` (uppercase UUID) on the accessory with `accessory`'s id (the
    /// accessory itself when `nil`).
    public func characteristic(ofType type: String, on accessory: UUID? = nil) -> UUID? {
        let all = [description] + description.bridgedAccessories
        let owner = all.first { accessory == nil || UUID(data: $0.id) == accessory }
        let found = owner?.services.flatMap(\.characteristics).first { $0.type.uppercased() == type.uppercased() }
        return found.flatMap { UUID(data: $0.id) }
    }

    /// Sets what it does with the writes that come next.
    public func setWriteBehaviour(_ behaviour: WriteBehaviour) {
        commandState.withLock { $0.writeBehaviour = behaviour }
    }

    /// Makes the accessory answer commands (`true`, the default) or leave them all unanswered.
    public func setResponsive(_ responsive: Bool) {
        commandState.withLock { $0.isResponsive = responsive }
    }

    // MARK: The link

    private func handle(_ message: LinkMessage) {
        if let waiter = startWaiter {
            startWaiter = nil
            isLinked = true
            waiter.resume()
        }
        defer { commandState.withLock { $0.onMessage }?(message) }
        switch message.kind {
        case .advertised(let advertised)?:
            description = advertised.accessory  // its values were taken on the loop thread (start())
        case .paired(let paired)?:
            credential = paired.credential
            onPaired?(paired.credential, description)
            for waiter in pairedWaiters { waiter.resume(returning: paired.credential) }
            pairedWaiters = []
        case .command?:
            break  // answered on the loop thread (start())
        case .unpaired?:
            credential = nil
        case .attached?, nil:
            break
        }
    }

    /// Answers a command on the link's loop thread.
    private nonisolated func perform(_ command: AccessoryCommand, on link: AccessoryLinkClient) {
        let answer = commandState.withLock { state -> (hapStatus: Int32, value: CharacteristicValue?)? in
            guard state.isResponsive else { return nil }
            switch command.action {
            case .write(let write)?:
                switch state.writeBehaviour {
                case .ignore:
                    return nil
                case .refuse(let status):
                    return (status, nil)
                case .accept:
                    let characteristic = UUID(data: write.characteristicID) ?? .random()
                    state.values[characteristic] = write.value
                    state.recentWrites.append((characteristic, write.value))
                    return (0, nil)
                }
            case .read(let read)?:
                let value = UUID(data: read.characteristicID).flatMap { state.values[$0] }
                return (value == nil ? -70409 : 0, value)
            case .identify?:
                state.identifyCount += 1
                return (0, nil)
            case nil:
                return (-70412, nil)
            }
        }
        guard let answer else { return }
        link.answerWithoutWaiting(command.commandID, hapStatus: answer.hapStatus, value: answer.value)
    }

    private func linkEnded(_ error: HomeClientError) {
        isLinked = false
        if let waiter = startWaiter {
            startWaiter = nil
            waiter.resume(throwing: error)
            return  // the opening fails: its caller decides what next
        }
        guard ownConnection != nil, !isStopped, relinking == nil else { return }
        relinking = Task { await self.relink() }
    }

    /// Links again after the link ended, as a device does: after 1 s, then twice as long each time
    /// up to 10 s, on a new connection, attaching with the credential, or advertising again once the
    /// server says the pairing is gone; until it links or is stopped.
    private func relink() async {
        var delay = Duration.seconds(1)
        while !isStopped {
            linkCall = nil
            await link?.close()
            link = nil
            try? await Task.sleep(for: delay)
            if Task.isCancelled || isStopped { break }
            do {
                try await openLink()
                relinkCount += 1
                if isLinked { break }  // else it ended again while it opened: once more
                delay = .seconds(1)
            } catch  where error.status == .unauthenticated && credential != nil {
                credential = nil  // unpaired meanwhile: advertise again, at once
                delay = .zero
            } catch {
                delay = delay == .zero ? .seconds(1) : min(delay * 2, .seconds(10))
            }
        }
        relinking = nil
    }

    /// The initial values a description declares (with its bridged accessories'), by id.
    private static func initialValues(of description: AccessoryDescription) -> [UUID: CharacteristicValue] {
        var values: [UUID: CharacteristicValue] = [:]
        for accessory in [description] + description.bridgedAccessories {
            for characteristic in accessory.services.flatMap(\.characteristics) where characteristic.hasValue {
                if let id = UUID(data: characteristic.id) { values[id] = characteristic.value }
            }
        }
        return values
    }
}
