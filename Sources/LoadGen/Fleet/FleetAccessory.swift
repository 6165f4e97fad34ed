import Foundation
import HomeProto
import RPCClient
import SwiftProtobuf
import UV
import Wire

/// One simulated accessory of the fleet (or a bridge with the accessories behind it), on the load
/// generator's loop: its own connection, its link stream (`Advertise` until paired, `Attach`
/// afterwards), every forwarded write accepted at once, and value reports on demand. Each accessory
/// has one characteristic, a counter (an unbounded uint32), so each reported value names the report
/// it came from.
final class FleetAccessory {
    /// One accessory's counter: the accessory (a bridged one, behind a bridge) and its characteristic.
    struct Counter: Codable, Hashable {
        var accessory: Data
        var characteristic: Data
    }

    static let service = "home.v1.AccessoryLink/"
    /// The custom service and characteristic types of the counter.
    static let serviceType = "B0A40001-0000-1000-8000-000000000001"
    static let counterType = "B0A40002-0000-1000-8000-000000000001"

    /// The link's accessory: the standalone accessory, or the bridge.
    let id: Data
    let isBridge: Bool
    /// The counters it reports: its own, or those of the accessories behind the bridge.
    let counters: [Counter]
    let home: Int
    var credential: String?
    private(set) var connection: ClientConnection?
    /// Called once the link is open: advertised (unpaired) or attached.
    private var onLinked: ((Result<Void, RPCError>) -> Void)?
    /// Called with the credential when a controller pairs the accessory.
    var onPaired: ((String) -> Void)?
    /// An open link ended: with the status it ended with, nil when it ended OK (the accessory was
    /// unpaired). A link that fails before it opens ends through `link`'s completion instead.
    var onLinkEnded: ((RPCError?) -> Void)?
    /// Whether the link is open now.
    private(set) var isLinked = false
    /// Failed attempts to link again since the link was last open (what the retry delay grows by).
    var relinkAttempts = 0
    private(set) var commandsAnswered = 0

    init(id: Data, isBridge: Bool, counters: [Counter], home: Int, credential: String?) {
        self.id = id
        self.isBridge = isBridge
        self.counters = counters
        self.home = home
        self.credential = credential
    }

    /// A new accessory with fresh identifiers, or with `bridged` > 0 a new bridge of that many.
    convenience init(home: Int, bridged: Int = 0) {
        let id = Self.randomID()
        let counters = (0..<max(bridged, 1)).map { _ in
            Counter(accessory: bridged > 0 ? Self.randomID() : id, characteristic: Self.randomID())
        }
        self.init(id: id, isBridge: bridged > 0, counters: counters, home: home, credential: nil)
    }

    static func randomID() -> Data {
        withUnsafeBytes(of: UUID.random().uuid) { Data($0) }
    }

    /// What it advertises: an accessory with the counter service, or a bridge of them.
    func description(named name: String) -> Home_V1_AccessoryDescription {
        guard isBridge else { return Self.accessory(counters[0], named: name) }
        var bridge = Home_V1_AccessoryDescription()
        bridge.id = id
        bridge.name = name
        bridge.category = 2
        bridge.manufacturer = "HomeRPC loadgen"
        bridge.model = "Fleet Bridge"
        bridge.bridgedAccessories = counters.enumerated().map { index, counter in
            Self.accessory(counter, named: "\(name) \(index + 1)")
        }
        return bridge
    }

    /// One accessory with one custom service holding the counter.
    private static func accessory(_ counter: Counter, named name: String) -> Home_V1_AccessoryDescription {
        var characteristic = Home_V1_CharacteristicDescription()
        characteristic.id = counter.characteristic
        characteristic.type = Self.counterType
        characteristic.properties.readable = true
        characteristic.properties.writable = true
        characteristic.properties.supportsEventNotification = true
        characteristic.metadata.format = .uint32
        var service = Home_V1_ServiceDescription()
        service.id = Self.randomID()
        service.type = Self.serviceType
        service.primary = true
        service.characteristics = [characteristic]
        var accessory = Home_V1_AccessoryDescription()
        accessory.id = counter.accessory
        accessory.name = name
        accessory.manufacturer = "HomeRPC loadgen"
        accessory.model = "Fleet Counter"
        accessory.services = [service]
        return accessory
    }

    /// Connects and opens the link: attaches with the credential, or advertises `name` with
    /// `setupCode`.
    func link(
        to endpoint: Endpoint,
        configuration: ClientConnection.Configuration,
        on loop: EventLoop,
        name: String,
        setupCode: String,
        then done: @escaping (Result<Void, RPCError>) -> Void
    ) {
        // A link that ended may leave its connection open (another took its place): start afresh,
        // once the reports still on their way there have their answers.
        connection?.closeWhenIdle()
        connection = nil
        isLinked = false
        onLinked = done
        do {
            try ClientConnection.connect(to: endpoint, on: loop, configuration: configuration) { [self] result in
                switch result {
                case .failure(let error): finishLinking(.failure(error))
                case .success(let connection):
                    self.connection = connection
                    openStream(on: connection, name: name, setupCode: setupCode)
                }
            }
        } catch {
            finishLinking(.failure(RPCError(code: .unavailable, message: "connect: \(error)")))
        }
    }

    private func openStream(on connection: ClientConnection, name: String, setupCode: String) {
        let method: String
        let request: [UInt8]
        if let credential {
            var attach = Home_V1_AttachRequest()
            attach.accessoryID = id
            attach.credential = credential
            // A bridge names what it serves (another set would get it blocked).
            if isBridge { attach.bridgedAccessoryIds = counters.map(\.accessory) }
            method = Self.service + "Attach"
            request = (try? attach.serializedBytes()) ?? []
        } else {
            var advertise = Home_V1_AdvertiseRequest()
            advertise.accessory = description(named: name)
            advertise.setupCode = setupCode
            method = Self.service + "Advertise"
            request = (try? advertise.serializedBytes()) ?? []
        }
        connection.serverStream(
            method,
            request: request,
            onMessage: { [weak self] bytes in self?.received(bytes) },
            onEnd: { [weak self] error in
                // The end of an earlier connection's link, closed when linking again, is not news.
                guard let self, self.connection === connection else { return }
                if isLinked {
                    isLinked = false
                    onLinkEnded?(error)
                } else {
                    finishLinking(.failure(error ?? RPCError(code: .unavailable, message: "the link ended")))
                }
            }
        )
    }

    private func finishLinking(_ result: Result<Void, RPCError>) {
        guard let done = onLinked else { return }
        onLinked = nil
        done(result)
    }

    private func received(_ bytes: [UInt8]) {
        guard let message = try? Home_V1_LinkMessage(linkBytes: bytes) else { return }
        switch message.kind {
        case .advertised?, .attached?:
            isLinked = true
            finishLinking(.success(()))
        case .paired(let paired)?:
            credential = paired.credential
            onPaired?(paired.credential)
        case .command(let command)?:
            answer(command)
        case .unpaired?:
            credential = nil
        case nil:
            break
        }
    }

    /// Accepts every write, answers reads with nothing it could not know (HAP: does not exist) and
    /// identify at once.
    private func answer(_ command: Home_V1_Command) {
        let hapStatus: Int32 = if case .read? = command.action { -70409 } else { 0 }
        commandsAnswered += 1
        connection?.unary(
            Self.service + "AnswerCommand",
            request: Home_V1_AnswerCommandRequest.bytes(commandID: command.commandID, hapStatus: hapStatus)
        ) { _ in }
    }

    /// Reports a counter's new value; `completion` runs with the server's answer.
    func report(_ value: UInt32, on counter: Counter, completion: @escaping (Result<[UInt8], RPCError>) -> Void) {
        guard let connection, isLinked, connection.isOpen else {
            completion(.failure(RPCError(code: .unavailable, message: "the accessory is not linked")))
            return
        }
        var report = Home_V1_ValueReport()
        report.characteristicID = counter.characteristic
        report.value.unsignedValue = UInt64(value)
        var request = Home_V1_ReportValuesRequest()
        request.reports = [report]
        connection.unary(
            Self.service + "ReportValues",
            request: (try? request.serializedBytes()) ?? [],
            completion: completion
        )
    }

    func close() {
        onLinkEnded = nil
        onLinked = nil
        connection?.close()
    }
}
