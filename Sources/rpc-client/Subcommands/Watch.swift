import ArgumentParser
import Foundation
import HomeClient
import HomeProto
import SwiftProtobuf

/// `rpc-client watch`: follows the changes of your homes, one line per event, until Ctrl-C.
struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow changes as they happen, one line per event, until Ctrl-C.",
        discussion: """
            Reconnects by itself (with backoff) and resumes after the last event it printed, so no \
            change is missed or printed twice across a server restart. Kinds are the event names of \
            docs/API.md, e.g. room-added, characteristic-value-updated.
            """
    )

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "A home's name or id to follow (repeatable); default: all your homes, also new ones.")
    var home: [String] = []
    @Option(parsing: .upToNextOption, help: "Only these event kinds (e.g. room-added reachability-updated).")
    var kinds: [String] = []
    @Option(
        help:
            "Also value events of this characteristic (repeatable), beside those with notifications on: its id, or ACCESSORY/TYPE in a --home."
    )
    var characteristic: [String] = []
    @Flag(help: "Start with each home's full state.")
    var snapshot = false
    @Flag(help: "Also show the changes this connection makes (none, unless you use `call` on it).")
    var includeOwn = false

    func run() async throws {
        let kinds = try kinds.map(Self.kind)
        if home.isEmpty, let named = characteristic.first(where: { Resolve.typedID($0) == nil }) {
            throw ValidationError("--characteristic \(named): give its id, or its home with --home")
        }
        try await connection.withHomeClient { client in
            var homeIDs: [UUID] = []
            var names: [Data: String] = [:]
            var homes: [Home] = []
            for text in home {
                let found = try await Resolve.home(text, client)
                homeIDs.append(found.id.uuid)
                homes.append(found)
            }
            let characteristics = try characteristic.map { text in try Self.characteristic(text, in: homes) }
            for summary in try await client.listHomes() { names[summary.id] = summary.name }
            let options = ChangeOptions(
                homes: homeIDs,
                kinds: kinds,
                characteristics: characteristics,
                snapshot: snapshot,
                includeOwnChanges: includeOwn
            )
            for try await event in client.changes(options) {
                if case .homeAdded(let added)? = event.payload { names[event.homeID] = added.home.name }
                if case .homeNameUpdated(let renamed)? = event.payload { names[event.homeID] = renamed.name }
                let line = connection.json ? try event.jsonString() : Self.describe(event, home: names[event.homeID])
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
        }
    }

    /// A characteristic by id, or by name in the first of `homes` that has it.
    static func characteristic(_ text: String, in homes: [Home]) throws -> UUID {
        if let id = Resolve.typedID(text) { return id }
        var firstFailure: (any Error)?
        for home in homes {
            do { return try Resolve.characteristic(text, in: home) } catch { firstFailure = firstFailure ?? error }
        }
        throw firstFailure ?? ValidationError("--characteristic \(text): give its id, or its home with --home")
    }

    /// `room-added`, `ROOM_ADDED` or `EVENT_KIND_ROOM_ADDED` as a kind.
    static func kind(_ text: String) throws -> HomeEventKind {
        var name = text.uppercased().replacingOccurrences(of: "-", with: "_")
        if !name.hasPrefix("EVENT_KIND_") { name = "EVENT_KIND_" + name }
        guard let request = try? Home_V1_SubscribeRequest(jsonString: "{\"kinds\":[\"\(name)\"]}"),
            let kind = request.kinds.first, kind != .unspecified
        else {
            throw ValidationError("--kinds: \(text) is not an event kind (docs/API.md lists them)")
        }
        return kind
    }

    /// One line: time, home, revision, kind and what it concerns (ids as UUIDs, a home's state as
    /// counts).
    static func describe(_ event: HomeEvent, home: String?) -> String {
        let time = Date(timeIntervalSince1970: Double(event.timeMs) / 1000)
        let clock = time.formatted(.iso8601.time(includingFractionalSeconds: true))
        var line = "\(clock)  \(home.map { "\"\($0)\"" } ?? Output.id(event.homeID))  r\(event.revision)  "
        var fields: [String: Any] = [:]
        if let json = try? event.jsonString(), let data = json.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        {
            fields = object
        }
        let envelope: Set<String> = ["homeId", "revision", "timeMs", "initiator", "own"]
        guard let (name, payload) = fields.first(where: { !envelope.contains($0.key) }) else { return line + "?" }
        line += kebab(name)
        switch event.payload {
        case .snapshot(let snapshot)?:
            line += "  " + summary(snapshot.home)
        case .resync(let resync)?:
            line += "  \(resync.reason)  " + summary(resync.home)
        case .homeAdded(let added)?:
            line += "  \"\(added.home.name)\""
        case .characteristicValueUpdated(let update)?:
            // The value as `characteristic read` prints it (JSON would turn a bool into 1).
            line +=
                "  characteristicId=\(Output.id(update.characteristicID))"
                + " accessoryId=\(Output.id(update.accessoryID))"
                + " value=\(Output.value(update.hasValue ? update.value : nil))"
            if update.skippedUpdates > 0 { line += " skippedUpdates=\(update.skippedUpdates)" }
        case .reachabilityUpdated(let update)?:
            // Spelled out: JSON leaves a false field out.
            line += "  accessoryId=\(Output.id(update.accessoryID)) reachable=\(update.reachable)"
        default:
            line += "  " + flatten(payload)
        }
        if event.own { line += "  (own)" }
        return line
    }

    private static func summary(_ home: Home) -> String {
        "\"\(home.name)\": \(home.rooms.count + 1) rooms, \(home.accessories.count) accessories, "
            + "\(home.users.count) users"
    }

    /// `{"room":{"id":"…","name":"Kitchen"}}` as `room.id=1831AA9F-… room.name="Kitchen"`.
    private static func flatten(_ value: Any, prefix: String = "") -> String {
        if let object = value as? [String: Any] {
            return object.keys.sorted().map { key in
                flatten(object[key]!, prefix: prefix.isEmpty ? key : prefix + "." + key)
            }
            .filter { !$0.isEmpty }.joined(separator: " ")
        }
        if let list = value as? [Any] {
            return "\(prefix)=[\(list.map { flatten($0) }.joined(separator: ", "))]"
        }
        var text = "\(value)"
        // JSON's true and false come back as numbers of type "c": print them as booleans, not 1 and 0.
        if let number = value as? NSNumber, String(cString: number.objCType) == "c" { text = "\(number.boolValue)" }
        let last = prefix.split(separator: ".").last.map(String.init) ?? prefix
        if last.lowercased().hasSuffix("id"), let data = Data(base64Encoded: text), data.count == 16 {
            text = data.uuid.uuidString
        } else if value is String {
            text = "\"\(text)\""
        }
        return prefix.isEmpty ? text : "\(prefix)=\(text)"
    }

    private static func kebab(_ camel: String) -> String {
        camel.reduce(into: "") { result, character in
            if character.isUppercase { result += "-" + character.lowercased() } else { result.append(character) }
        }
    }
}
