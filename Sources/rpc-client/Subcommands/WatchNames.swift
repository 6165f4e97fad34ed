import Foundation
import HomeClient
import HomeProto

/// What `watch` calls a home's objects, by id: rooms, zones, accessories, services, characteristics
/// (as `ACCESSORY/TYPE`), service groups, action sets, triggers and users. An object keeps the last
/// name learnt, so the event that removes one still names it.
struct WatchNames {
    private var names: [Data: String] = [:]

    subscript(id: Data) -> String? { names[id] }

    /// Learns every name in `home`, as it is now.
    mutating func learn(_ home: Home) {
        names[home.id] = home.name
        for room in [home.roomForEntireHome] + home.rooms { names[room.id] = room.name }
        for zone in home.zones { names[zone.id] = zone.name }
        for accessory in home.accessories { learn(accessory) }
        for group in home.serviceGroups { names[group.id] = group.name }
        for actionSet in home.actionSets { names[actionSet.id] = actionSet.name }
        for trigger in home.triggers { names[trigger.id] = trigger.name }
        for user in home.users { names[user.id] = user.name }
    }

    /// Learns an accessory's name and those of its services and characteristics.
    mutating func learn(_ accessory: Accessory) {
        names[accessory.id] = accessory.name
        for service in accessory.services {
            names[service.id] = service.name
            for characteristic in service.characteristics {
                names[characteristic.id] = Output.characteristicName(accessory: accessory, type: characteristic.type)
            }
        }
    }

    /// Learns what an event's payload (protobuf's JSON, parsed) names: an object it carries whole (a
    /// room, zone, group, action set, trigger or user, each with `id` and `name`), or the new name
    /// of a `…NameUpdated` event's object.
    mutating func learn(kind: String, from payload: Any) {
        guard let fields = payload as? [String: Any] else { return }
        let renamed = kind.hasSuffix("NameUpdated") ? String(kind.dropLast("NameUpdated".count)) + "Id" : nil
        if let renamed, let name = fields["name"] as? String, let id = Self.id(fields[renamed]) { names[id] = name }
        for case let object as [String: Any] in fields.values {
            if let id = Self.id(object["id"]), let name = object["name"] as? String { names[id] = name }
        }
    }

    /// The 16 bytes protobuf's JSON writes an id as, in base64; `nil` for anything else.
    static func id(_ value: Any?) -> Data? {
        (value as? String).flatMap { Data(base64Encoded: $0) }.flatMap { $0.count == 16 ? $0 : nil }
    }
}
