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
            change is missed or printed twice across a server restart. Objects are named as the other \
            commands take them (a characteristic as ACCESSORY/TYPE); --json prints the events as they \
            come. Kinds are the event names of \
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
            // The lines name objects after the events that add and rename them: receive those too,
            // and print only the kinds asked for.
            let printed = Set(kinds)
            let received = kinds.isEmpty || connection.json ? kinds : Array(printed.union(Self.naming))
            let options = ChangeOptions(
                homes: homeIDs,
                kinds: received,
                characteristics: characteristics,
                snapshot: snapshot,
                includeOwnChanges: includeOwn
            )
            // What the lines call the objects: learnt from each home now, then from the events (scripts
            // take --json, which needs none of this).
            var objects = WatchNames()
            if !connection.json {
                for home in homes { objects.learn(home) }
                if homes.isEmpty {
                    for id in names.keys { if let home = try? await client.home(id.uuid).get() { objects.learn(home) } }
                }
            }
            for try await event in client.changes(options) {
                if case .homeAdded(let added)? = event.payload { names[event.homeID] = added.home.name }
                if case .homeNameUpdated(let renamed)? = event.payload { names[event.homeID] = renamed.name }
                if connection.json {
                    FileHandle.standardOutput.write(Data((try event.jsonString() + "\n").utf8))
                    continue
                }
                switch event.payload {
                case .snapshot(let snapshot)?: objects.learn(snapshot.home)
                case .resync(let resync)?: objects.learn(resync.home)
                case .accessoryAdded(let added)?
                where !added.accessory.bridged || objects[added.accessory.bridgeID] != nil:
                    objects.learn(added.accessory)
                case .accessoryAdded?, .accessoryNameUpdated?:
                    // A new bridge has no event of its own, and a renamed accessory's characteristics
                    // are named after it: learn the home again.
                    if let home = try? await client.home(event.homeID.uuid).get() { objects.learn(home) }
                default:
                    // What the event itself names (a removed object keeps the name it had).
                    if let (kind, payload) = Self.payload(of: event) { objects.learn(kind: kind, from: payload) }
                }
                if !printed.isEmpty, let kind = Self.kind(of: event), !printed.contains(kind) { continue }
                let line = Self.describe(event, home: names[event.homeID], objects: objects)
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

    /// The kinds whose events carry a name `WatchNames` learns.
    static let naming: Set<HomeEventKind> = [
        .homeAdded, .homeNameUpdated, .accessoryAdded, .accessoryNameUpdated, .serviceNameUpdated, .roomAdded,
        .roomNameUpdated, .zoneAdded, .zoneNameUpdated, .serviceGroupAdded, .serviceGroupNameUpdated,
        .actionSetAdded, .actionSetNameUpdated, .triggerAdded, .triggerNameUpdated, .userAdded,
    ]

    /// The kind of `event`; `nil` for a snapshot or a resync, which come whatever the kinds.
    static func kind(of event: HomeEvent) -> HomeEventKind? {
        payload(of: event).flatMap { try? kind(kebab($0.kind)) }
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

    /// One line: time, home, revision, kind and what it concerns (objects by name where `objects`
    /// knows them, else their ids as UUIDs; a home's state as counts).
    static func describe(_ event: HomeEvent, home: String?, objects: WatchNames) -> String {
        let time = Date(timeIntervalSince1970: Double(event.timeMs) / 1000)
        let clock = time.formatted(.iso8601.time(includingFractionalSeconds: true))
        var line = "\(clock)  \(home.map { "\"\($0)\"" } ?? Output.id(event.homeID))  r\(event.revision)  "
        guard let (name, payload) = payload(of: event) else { return line + "?" }
        line += kebab(name)
        switch event.payload {
        case .snapshot(let snapshot)?:
            line += "  " + summary(snapshot.home)
        case .resync(let resync)?:
            line += "  \(resync.reason)  " + summary(resync.home)
        case .homeAdded(let added)?:
            line += "  \"\(added.home.name)\""
        case .accessoryAdded(let added)?:
            // The accessory, not its every service and characteristic (`--json` has them).
            let accessory = added.accessory
            line +=
                "  accessory=\"\(accessory.name)\" id=\(Output.id(accessory.id)) "
                + named("roomId", accessory.roomID, objects)
            if accessory.bridged { line += " " + named("bridgeId", accessory.bridgeID, objects) }
            line += " model=\"\(accessory.manufacturer) \(accessory.model)\" reachable=\(accessory.reachable)"
            line += " characteristics=\(accessory.services.reduce(0) { $0 + $1.characteristics.count })"
        case .characteristicValueUpdated(let update)?:
            // The value as `characteristic read` prints it (JSON would turn a bool into 1).
            line +=
                "  " + named("characteristicId", update.characteristicID, objects)
                + " value=\(Output.value(update.hasValue ? update.value : nil))"
            if update.skippedUpdates > 0 { line += " skippedUpdates=\(update.skippedUpdates)" }
        case .reachabilityUpdated(let update)?:
            // Spelled out: JSON leaves a false field out.
            line += "  " + named("accessoryId", update.accessoryID, objects) + " reachable=\(update.reachable)"
        default:
            line += "  " + flatten(payload, objects: objects)
        }
        if event.own { line += "  (own)" }
        return line
    }

    private static func summary(_ home: Home) -> String {
        "\"\(home.name)\": \(home.rooms.count + 1) rooms, \(home.accessories.count) accessories, "
            + "\(home.users.count) users"
    }

    /// The event's kind as protobuf's JSON names it (`roomAdded`) and its payload, parsed.
    static func payload(of event: HomeEvent) -> (kind: String, payload: Any)? {
        guard let json = try? event.jsonString(), let data = json.data(using: .utf8),
            let fields = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        let envelope: Set<String> = ["homeId", "revision", "timeMs", "initiator", "own"]
        return fields.first { !envelope.contains($0.key) }.map { (kind: $0.key, payload: $0.value) }
    }

    /// `accessoryId` with the accessory's name as `accessory="Desk Lamp"`, else as
    /// `accessoryId=UUID`.
    private static func named(_ key: String, _ id: Data, _ objects: WatchNames) -> String {
        guard let name = objects[id] else { return "\(key)=\(Output.id(id))" }
        return "\(key.dropLast(2))=\"\(name)\""
    }

    /// `{"room":{"id":"…","name":"Kitchen"}}` as `room.id=1831AA9F-… room.name="Kitchen"`;
    /// `{"accessoryId":"…"}` as `accessory="Desk Lamp"` and `{"actionSetIds":[…]}` as
    /// `actionSets=["Evening"]` where `objects` knows the names.
    private static func flatten(_ value: Any, prefix: String = "", objects: WatchNames) -> String {
        if let object = value as? [String: Any] {
            return object.keys.sorted().map { key in
                flatten(object[key]!, prefix: prefix.isEmpty ? key : prefix + "." + key, objects: objects)
            }
            .filter { !$0.isEmpty }.joined(separator: " ")
        }
        let last = prefix.split(separator: ".").last.map(String.init) ?? prefix
        if let list = value as? [Any] {
            let ids = list.compactMap(WatchNames.id)
            guard last.hasSuffix("Ids"), ids.count == list.count else {
                return "\(prefix)=[\(list.map { flatten($0, objects: objects) }.joined(separator: ", "))]"
            }
            let names = ids.map { id in objects[id].map { "\"\($0)\"" } ?? Output.id(id) }
            let key = ids.allSatisfy { objects[$0] != nil } ? String(prefix.dropLast(3)) + "s" : prefix
            return "\(key)=[\(names.joined(separator: ", "))]"
        }
        if last.hasSuffix("Id"), let id = WatchNames.id(value) {
            return named(prefix, id, objects)
        }
        var text = "\(value)"
        // JSON's true and false come back as numbers of type "c": print them as booleans, not 1 and 0.
        if let number = value as? NSNumber, String(cString: number.objCType) == "c" { text = "\(number.boolValue)" }
        if last == "id", let id = WatchNames.id(value) {
            text = Output.id(id)
        } else if last.hasSuffix("Ms"), let milliseconds = Int64(text) {
            // A time, `fireDateMs` as `fireDate=2031-01-15T07:00:00Z` (JSON writes 64-bit integers as text).
            return "\(prefix.dropLast(2))=\(Output.date(milliseconds))"
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
