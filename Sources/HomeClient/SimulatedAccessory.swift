public import Foundation
public import HomeProto
import Wire

/// A simulated accessory (HomeKit's Accessory Simulator): it advertises itself or attaches with its
/// credential, keeps its characteristics' values, applies the writes it accepts, answers reads and
/// identify requests, and can change values on its own. `rpc-client accessory simulate` runs these;
/// tests use them as real accessories.
///
/// Many simulated accessories may share one ``AccessoryLinkClient`` (each link is one stream of the
/// connection).
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
    public nonisolated let setupCode: String
    /// Set once paired (or given, to attach).
    public private(set) var credential: String?
    public var writeBehaviour: WriteBehaviour = .accept
    /// Whether the accessory answers commands at all; a hung one (`false`) leaves every write, read
    /// and identify request to the controller's deadline (8).
    public private(set) var isResponsive = true
    /// Each characteristic's current value, by id.
    public private(set) var values: [UUID: CharacteristicValue] = [:]
    /// The latest writes applied, oldest first: at least the last ``recentWriteLimit`` of them (a
    /// simulator serving a load test for hours keeps no more).
    public var appliedWrites: [(characteristic: UUID, value: CharacteristicValue)] { recentWrites.entries }
    /// Writes applied since the accessory started.
    public var appliedWriteCount: Int { recentWrites.total }
    public static let recentWriteLimit = 1_000
    public private(set) var identifyCount = 0
    /// Whether the link is open now.
    public private(set) var isLinked = false

    private var recentWrites = RecentHistory<(characteristic: UUID, value: CharacteristicValue)>(
        limit: recentWriteLimit
    )
    private let link: AccessoryLinkClient
    private var serving: Task<Void, Never>?
    private var startWaiter: CheckedContinuation<Void, any Error>?
    private var pairedWaiters: [CheckedContinuation<String, Never>] = []
    /// Called with the credential and the description (ids filled in) when a controller pairs the
    /// accessory: what it must keep to attach again.
    private var onPaired: (@Sendable (String, AccessoryDescription) -> Void)?
    /// Called with every message the link brings (for a log).
    private var onMessage: (@Sendable (LinkMessage) -> Void)?

    /// - Parameter credential: the credential from an earlier pairing: ``start()`` attaches instead
    ///   of advertising.
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
        values = Self.initialValues(of: description)
    }

    /// The accessory's identifier (the bridge's, for a bridge).
    public var id: UUID { UUID(data: description.id) ?? UUID() }

    public func onPaired(_ handler: @escaping @Sendable (String, AccessoryDescription) -> Void) {
        onPaired = handler
    }

    public func onMessage(_ handler: @escaping @Sendable (LinkMessage) -> Void) {
        onMessage = handler
    }

    /// Opens the link (advertising, or attaching with the credential) and serves it in the
    /// background; returns once the server accepted it.
    /// - Throws: the server's refusal (a bad description, an id already paired, a wrong credential).
    public func start() async throws {
        let stream: MessageStream<LinkMessage>
        if let credential {
            let bridged = description.bridgedAccessories.compactMap { UUID(data: $0.id) }
            stream = try link.attach(id, credential: credential, bridging: bridged)
        } else {
            stream = try link.advertise(description, setupCode: setupCode)
        }
        serving = Task {
            var messages = stream.makeAsyncIterator()
            do {
                while let message = try await messages.next() { self.handle(message) }
                self.linkEnded(HomeClientError(status: .unavailable, message: "the link ended"))
            } catch {
                self.linkEnded(error)
            }
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            startWaiter = continuation
        }
    }

    /// Closes the link (the accessory becomes unreachable, or leaves the browser).
    public func stop() async {
        serving?.cancel()
        await serving?.value
        serving = nil
    }

    /// Waits until a controller has paired the accessory; returns its credential.
    public func paired() async -> String {
        if let credential { return credential }
        return await withCheckedContinuation { pairedWaiters.append($0) }
    }

    /// Changes a value on the accessory's own account (a switch pressed, a new reading) and reports it.
    /// - Parameter report: `false` changes it on the accessory only, as one that sends no events
    ///   would: the controller learns of it on its next fresh read.
    public func change(_ characteristic: UUID, to value: CharacteristicValue, report: Bool = true) async throws {
        values[characteristic] = value
        if report { try await link.report([(characteristic, value)]) }
    }

    /// The characteristic of `type` (uppercase UUID) on the accessory with `accessory`'s id (the
    /// accessory itself when `nil`).
    public func characteristic(ofType type: String, on accessory: UUID? = nil) -> UUID? {
        let all = [description] + description.bridgedAccessories
        let owner = all.first { accessory == nil || UUID(data: $0.id) == accessory }
        let found = owner?.services.flatMap(\.characteristics).first { $0.type.uppercased() == type.uppercased() }
        return found.flatMap { UUID(data: $0.id) }
    }

    public func setWriteBehaviour(_ behaviour: WriteBehaviour) {
        writeBehaviour = behaviour
    }

    public func setResponsive(_ responsive: Bool) {
        isResponsive = responsive
    }

    // MARK: The link

    private func handle(_ message: LinkMessage) {
        if let waiter = startWaiter {
            startWaiter = nil
            isLinked = true
            waiter.resume()
        }
        defer { onMessage?(message) }
        switch message.kind {
        case .advertised(let advertised)?:
            description = advertised.accessory
            values.merge(Self.initialValues(of: description)) { current, _ in current }
        case .paired(let paired)?:
            credential = paired.credential
            onPaired?(paired.credential, description)
            for waiter in pairedWaiters { waiter.resume(returning: paired.credential) }
            pairedWaiters = []
        case .command(let command)?:
            perform(command)
        case .unpaired?:
            credential = nil
        case .attached?, nil:
            break
        }
    }

    private func perform(_ command: AccessoryCommand) {
        guard isResponsive else { return }
        let id = command.commandID
        switch command.action {
        case .write(let write)?:
            switch writeBehaviour {
            case .ignore:
                return
            case .refuse(let status):
                link.answerWithoutWaiting(id, hapStatus: status)
            case .accept:
                let characteristic = UUID(data: write.characteristicID) ?? UUID()
                values[characteristic] = write.value
                recentWrites.append((characteristic, write.value))
                link.answerWithoutWaiting(id)
            }
        case .read(let read)?:
            let value = UUID(data: read.characteristicID).flatMap { values[$0] }
            link.answerWithoutWaiting(id, hapStatus: value == nil ? -70409 : 0, value: value)
        case .identify?:
            identifyCount += 1
            link.answerWithoutWaiting(id)
        case nil:
            link.answerWithoutWaiting(id, hapStatus: -70412)
        }
    }

    private func linkEnded(_ error: any Error) {
        isLinked = false
        startWaiter?.resume(throwing: error)
        startWaiter = nil
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
