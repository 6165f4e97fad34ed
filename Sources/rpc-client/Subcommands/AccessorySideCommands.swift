import ArgumentParser
import Foundation
import HomeClient
import HomeProto
import SwiftProtobuf
import Wire

import struct HomeService.CharacteristicMetadata
import enum HomeService.StandardCatalog
import enum UV.Endpoint

/// `rpc-client accessory browse`: the accessory browser.
struct Browse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show unpaired accessories as they are advertised and leave (Ctrl-C to stop)."
    )
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "Stop after this many seconds.") var seconds: Double?

    func run() async throws {
        try await connection.withHomeClient { client in
            let browser = try await client.browseAccessories()
            let watching = Task {
                for try await event in browser {
                    if connection.json {
                        try Output.json(event)
                    } else if case .found(let found)? = event.kind {
                        let bridged =
                            found.bridgedAccessoryNames.isEmpty
                            ? "" : " (bridge: \(found.bridgedAccessoryNames.joined(separator: ", ")))"
                        print("found    \(Output.id(found.id))  \(found.name)\(bridged)")
                    } else if case .removed(let removed)? = event.kind {
                        print("removed  \(Output.id(removed.id))  \(removed.reason == .paired ? "paired" : "gone")")
                    }
                    Output.flush()
                }
            }
            if let seconds {
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                watching.cancel()
            }
            try? await watching.value
        }
    }
}

/// `rpc-client accessory add`: pairs an advertised accessory into a home.
struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add an advertised accessory to a home with its setup code (a bridge brings those behind it)."
    )
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "The home's name or id.") var home: String
    @Option(help: "The setup code the accessory shows, XXX-XX-XXX.") var setupCode: String
    @Argument(help: "The advertised accessory's name or id (see `accessory browse`).") var accessory: String

    func run() async throws {
        let added = try await connection.withHomeClient { client in
            let id = try await Self.advertisedID(accessory, client)
            return try await client.home(try await Resolve.home(home, client).id.uuid).addAccessory(
                id,
                setupCode: setupCode
            )
        }
        if connection.json {
            var response = Home_V1_AddAccessoryResponse()
            response.accessories = added
            try Output.json(response)
        } else {
            for accessory in added { print("added \(accessory.name)  \(Output.id(accessory.id))") }
        }
    }

    /// The id of the advertised accessory named `text` (or `text` itself when it is an id).
    static func advertisedID(_ text: String, _ client: HomeClient) async throws -> UUID {
        if let id = Resolve.typedID(text) { return id }
        // The browser lists everything advertised now first: read what arrives within a moment.
        let browser = try await client.browseAccessories()
        let collecting = Task { () -> [Home_V1_DiscoveredAccessory] in
            var found: [Home_V1_DiscoveredAccessory] = []
            do {
                for try await event in browser {
                    if case .found(let accessory)? = event.kind { found.append(accessory) }
                    if found.contains(where: { $0.name == text }) { break }
                }
            } catch {}
            return found
        }
        let timeout = Task {
            try await Task.sleep(for: .milliseconds(500))
            collecting.cancel()
        }
        let found = await collecting.value
        timeout.cancel()
        return try Resolve.pick(text, "advertised accessory", in: found, id: \.id, name: \.name).id.uuid
    }
}

/// `rpc-client accessory simulate`: HomeKit's Accessory Simulator.
struct Simulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run simulated accessories (or a bridge of them) that pair, take writes and report changes.",
        discussion: """
            Each accessory has one service of a standard type (`--service lightbulb`, `switch`, `outlet`, \
            `temperature-sensor`, ...: any service name of the catalog, case and hyphens ignored) with its required \
            characteristics. The setup code and, once paired, the credential are kept in --state, so a \
            restart attaches again instead of advertising. When the link ends or the server cannot be \
            reached, it tries again after 1 s, then twice as long each time up to 10 s, until Ctrl-C.
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @Option(help: "The service type of each accessory.") var service = "lightbulb"
    @Option(help: "Advertise this home.v1.AccessoryDescription (protobuf JSON) instead of --service/--count.")
    var descriptionJSON: String?
    @Option(help: "How many accessories.") var count = 1
    @Option(help: "Put them behind a bridge of this name.") var bridge: String?
    @Option(help: "The accessories' name (numbered when there are several).") var name: String?
    @Option(help: "The setup code to show (XXX-XX-XXX); random when new.") var setupCode: String?
    @Option(help: "Where the description and credential are kept.") var state = "accessory-simulator.json"
    @Option(help: "Change a random value on the accessory's own every this many seconds.") var changeEvery: Double?
    // Unconditional: a HAP status is negative, and "-70403" would otherwise read as an option.
    @Option(parsing: .unconditional, help: "Refuse writes with this HAP status (e.g. -70403).") var refuseWrites: Int32?
    @Flag(help: "Never answer writes (the controller gets 8).") var ignoreWrites = false
    @Option(help: "Drop the connection after this many seconds (then --back-after).") var dropAfter: Double?
    @Option(help: "Seconds to stay away after a drop.") var backAfter: Double = 5
    @Flag(help: "Do not print each command (for load tests).") var quiet = false

    func run() async throws {
        let stored = SimulatorState.load(from: state)
        // Updated from the simulator once linked: advertising gives a description without ids its
        // ids, and a reconnect must attach with them (it sent the id-less one again, which the
        // server refused as an unknown accessory, and the pairing was dropped).
        var description = try stored?.description ?? makeDescription()
        let code = stored?.setupCode ?? setupCode ?? SimulatorState.randomSetupCode()
        var credential = stored?.credential
        let endpoint = try connection.parsedEndpoint
        let configuration = try connection.connectionConfiguration
        // A server that is away (restarting, draining) is waited for, as a device would: 1 s, then
        // twice as long each time, up to 10 s.
        var retryDelay = 1.0
        while true {
            guard let link = try await Self.connect(to: endpoint, configuration: configuration) else {
                retryDelay = await Self.waitToRetry(delay: retryDelay)
                continue
            }
            let simulator = SimulatedAccessory(description, setupCode: code, credential: credential, link: link)
            await configure(simulator)
            if let error = await Self.start(simulator) {
                await link.close()
                if error.status == .unauthenticated && credential != nil {
                    print("the pairing is gone (\(error.message)): advertising again")
                    credential = nil
                    SimulatorState(description: description, setupCode: code, credential: nil).save(to: state)
                    continue
                }
                guard error.status == .unavailable else { throw error }
                print("the server is unavailable (\(error.message))")
                retryDelay = await Self.waitToRetry(delay: retryDelay)
                continue
            }
            retryDelay = 1
            let current = await simulator.description
            description = current
            SimulatorState(description: current, setupCode: code, credential: credential).save(to: state)
            print(
                credential == nil
                    ? "advertising \"\(current.name)\" \(Output.id(current.id)) with setup code \(code)"
                    : "attached \"\(current.name)\" \(Output.id(current.id))"
            )
            Output.flush()
            let changes = changeEvery.map { seconds in Task { await changeValues(simulator, every: seconds) } }
            if let dropAfter {
                try? await Task.sleep(for: .milliseconds(Int(dropAfter * 1000)))
                changes?.cancel()
                credential = await simulator.credential
                await simulator.stop()
                await link.close()
                print("dropped; back in \(backAfter) s")
                Output.flush()
                try? await Task.sleep(for: .milliseconds(Int(backAfter * 1000)))
                continue
            }
            while await simulator.isLinked { try? await Task.sleep(for: .milliseconds(200)) }
            changes?.cancel()
            credential = await simulator.credential
            await link.close()
            print("the link ended; reconnecting in 1 s")
            Output.flush()
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Starts the simulator; its failure, if it failed.
    private static func start(_ simulator: SimulatedAccessory) async -> HomeClientError? {
        do {
            try await simulator.start()
            return nil
        } catch {
            return error
        }
    }

    private func configure(_ simulator: SimulatedAccessory) async {
        if ignoreWrites {
            await simulator.setWriteBehaviour(.ignore)
        } else if let refuseWrites {
            await simulator.setWriteBehaviour(.refuse(hapStatus: refuseWrites))
        }
        let statePath = state
        let json = connection.json
        await simulator.onPaired(Self.keep(in: statePath, code: simulator.setupCode))
        guard !quiet else { return }
        await simulator.onMessage { message in
            if json {
                print((try? message.jsonString()) ?? "")
            } else {
                switch message.kind {
                case .paired?: print("paired: credential saved in \(statePath)")
                case .command(let command)?: print(Self.describe(command))
                case .unpaired?: print("removed from its home: the credential is void")
                default: break
                }
            }
            Output.flush()
        }
    }

    /// A link to the server, or `nil` when it is unavailable (it says why).
    private static func connect(
        to endpoint: Endpoint,
        configuration: ClientConnection.Configuration
    ) async throws -> AccessoryLinkClient? {
        do {
            return try await AccessoryLinkClient.connect(to: endpoint, connection: configuration)
        } catch {
            guard error.status == .unavailable, !error.isSecurityFailure else { throw error }
            print("the server is unavailable (\(error.message))")
            return nil
        }
    }

    /// Waits `delay` seconds before the next try, and returns the delay after it.
    private static func waitToRetry(delay: Double) async -> Double {
        print("retrying in \(delay.formatted(.number.precision(.fractionLength(0...1)))) s")
        Output.flush()
        try? await Task.sleep(for: .milliseconds(Int(delay * 1000)))
        return min(delay * 2, 10)
    }

    /// Saves the pairing (the description with its ids, and the credential) when it happens.
    static func keep(in path: String, code: String) -> @Sendable (String, AccessoryDescription) -> Void {
        { credential, description in
            SimulatorState(description: description, setupCode: code, credential: credential).save(to: path)
        }
    }

    static func describe(_ command: Home_V1_Command) -> String {
        switch command.action {
        case .write(let write)?:
            "write   \(Output.id(write.characteristicID)) = \(Output.value(write.value))"
        case .read(let read)?: "read    \(Output.id(read.characteristicID))"
        case .identify?: "identify \(Output.id(command.accessoryID))"
        case nil: "unknown command \(command.commandID)"
        }
    }

    /// The accessories' description from the catalog.
    func makeDescription() throws -> AccessoryDescription {
        if let descriptionJSON {
            guard let text = try? String(contentsOfFile: descriptionJSON, encoding: .utf8) else {
                throw ValidationError("cannot read \(descriptionJSON)")
            }
            do {
                return try AccessoryDescription(jsonString: text)
            } catch {
                throw ValidationError("\(descriptionJSON) is not a home.v1.AccessoryDescription: \(error)")
            }
        }
        let type = try CatalogNames.serviceType(service)
        guard count >= 1, count <= 150 else { throw ValidationError("--count must be within 1...150") }
        let base = name ?? type.name
        let accessories = (1...count).map { index in
            var accessory = AccessoryDescription()
            accessory.name = count == 1 ? base : "\(base) \(index)"
            accessory.category = 1
            accessory.manufacturer = "HomeRPC"
            accessory.model = "Simulated \(type.name)"
            accessory.supportsIdentify = true
            var service = Home_V1_ServiceDescription()
            service.type = type.uuid
            service.primary = true
            service.characteristics = type.required.compactMap { shortID in
                guard let characteristic = StandardCatalog.characteristicTypes.first(where: { $0.shortID == shortID })
                else { return nil }
                var description = Home_V1_CharacteristicDescription()
                description.type = characteristic.uuid
                if characteristic.properties.contains(.readable),
                    let value = SimulatorState.initialValue(characteristic.metadata)
                {
                    description.value = value
                }
                return description
            }
            accessory.services = [service]
            return accessory
        }
        guard let bridge else { return accessories[0] }
        var bridgeDescription = AccessoryDescription()
        bridgeDescription.name = bridge
        bridgeDescription.category = 2
        bridgeDescription.manufacturer = "HomeRPC"
        bridgeDescription.model = "Simulated Bridge"
        bridgeDescription.bridgedAccessories = accessories
        return bridgeDescription
    }

    /// Every `seconds`, a random readable value changes (a bool flips, a number moves in its range).
    private func changeValues(_ simulator: SimulatedAccessory, every seconds: Double) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            let description = await simulator.description
            let candidates = ([description] + description.bridgedAccessories).flatMap(\.services).flatMap(
                \.characteristics
            )
            .compactMap { characteristic -> (UUID, CharacteristicMetadata)? in
                guard let type = StandardCatalog.characteristicType(uuid: characteristic.type),
                    type.properties.contains(.supportsEventNotification)
                else { return nil }
                return (characteristic.id.uuid, type.metadata)
            }
            guard let (id, metadata) = candidates.randomElement() else { return }
            let current = await simulator.values[id]
            guard let next = SimulatorState.changedValue(current, metadata) else { continue }
            do {
                try await simulator.change(id, to: next)
                print("changed \(id.uuidString) = \(Output.value(next))")
            } catch {
                print("report refused: \(error)")
            }
            Output.flush()
        }
    }
}

/// What `accessory simulate` keeps between runs.
struct SimulatorState: Codable {
    var descriptionJSON: String
    var setupCode: String
    var credential: String?

    init(description: AccessoryDescription, setupCode: String, credential: String?) {
        descriptionJSON = (try? description.jsonString()) ?? "{}"
        self.setupCode = setupCode
        self.credential = credential
    }

    var description: AccessoryDescription? { try? AccessoryDescription(jsonString: descriptionJSON) }

    static func load(from path: String) -> (description: AccessoryDescription, setupCode: String, credential: String?)?
    {
        guard let data = FileManager.default.contents(atPath: path),
            let state = try? JSONDecoder().decode(SimulatorState.self, from: data),
            let description = state.description
        else { return nil }
        return (description, state.setupCode, state.credential)
    }

    /// Written with mode 0600: the credential is a secret.
    func save(to path: String) {
        guard let data = try? JSONEncoder().encode(self) else { return }
        _ = FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600])
    }

    static func randomSetupCode() -> String {
        while true {
            let digits = (0..<8).map { _ in String(Int.random(in: 0...9)) }
            let code = digits[0..<3].joined() + "-" + digits[3..<5].joined() + "-" + digits[5..<8].joined()
            if Set(digits).count > 2 { return code }
        }
    }

    static func initialValue(_ metadata: CharacteristicMetadata) -> CharacteristicValue? {
        switch metadata.format {
        case .bool: return .bool(false)
        case .float: return .float(metadata.minimumValue ?? 0)
        case .string: return .string("")
        case .int, .uint8, .uint16, .uint32, .uint64:
            if let first = metadata.validValues?.first { return .int(Int64(first)) }
            return .int(Int64(metadata.minimumValue ?? 0))
        default: return nil
        }
    }

    static func changedValue(
        _ current: CharacteristicValue?,
        _ metadata: CharacteristicMetadata
    ) -> CharacteristicValue? {
        switch metadata.format {
        case .bool: return .bool(!(current?.boolValue ?? false))
        case .float:
            let low = metadata.minimumValue ?? 0
            let high = metadata.maximumValue ?? 100
            let step = metadata.stepValue ?? 0.1
            return .float((Double.random(in: low...high) / step).rounded() * step)
        case .int, .uint8, .uint16, .uint32, .uint64:
            if let valid = metadata.validValues, let pick = valid.randomElement() { return .int(Int64(pick)) }
            return .int(Int64.random(in: Int64(metadata.minimumValue ?? 0)...Int64(metadata.maximumValue ?? 100)))
        default: return nil
        }
    }
}
