import ArgumentParser
import Foundation
import HomeClient
import HomeProto
import SwiftProtobuf

/// Printing results: a table for people, protobuf's JSON mapping for scripts.
enum Output {
    /// A home's users with their ids in it, the caller's own marked.
    static func users(of home: Home) {
        table(
            ["NAME", "ACCESS", "ID"],
            home.users.map { user in
                [
                    user.id == home.currentUserID ? "\(user.name) (you)" : user.name,
                    user.owner ? "owner" : user.administrator ? "administrator" : "guest",
                    id(user.id),
                ]
            }
        )
    }

    static func table(_ headers: [String], _ rows: [[String]]) {
        let widths = headers.indices.map { column in
            ([headers[column]] + rows.map { $0[column] }).map(displayWidth).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0 + String(repeating: " ", count: $1 - displayWidth($0)) }
                .joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        print(line(headers))
        for row in rows { print(line(row)) }
    }

    /// Columns a terminal gives `text`: East Asian wide characters (卧室, 한국어, full-width forms)
    /// take two, combining marks none, everything else one.
    static func displayWidth(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { width, scalar in
            switch scalar.value {
            case 0x0300...0x036F, 0x200B...0x200F, 0xFE00...0xFE0F: width
            case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
                0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
                0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
                width + 2
            default: width + 1
            }
        }
    }

    static func json(_ message: some SwiftProtobuf.Message) throws {
        var options = JSONEncodingOptions()
        options.alwaysPrintEnumsAsInts = false
        print(try message.jsonString(options: options))
    }

    /// Sends what was printed now (a pipe's reader sees each line as it happens).
    static func flush() { fflush(nil) }

    static func id(_ data: Data) -> String { UUID(data: data)?.uuidString ?? "-" }

    /// A characteristic as `characteristic` commands take it by name: "Desk Lamp/On" (its id when the
    /// home does not hold it).
    static func characteristic(_ id: Data, in home: Home) -> String {
        for accessory in home.accessories {
            for service in accessory.services {
                if let found = service.characteristics.first(where: { $0.id == id }) {
                    return characteristicName(accessory: accessory, type: found.type)
                }
            }
        }
        return Output.id(id)
    }

    /// "Desk Lamp/On": how a person names a characteristic of `accessory` of type `type`.
    static func characteristicName(accessory: Accessory, type: String) -> String {
        "\(accessory.name)/\(CatalogNames.characteristicName(type))"
    }

    /// A time the API gives in milliseconds since 1970, in ISO 8601 (UTC).
    static func date(_ milliseconds: Int64) -> String {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: milliseconds % 1000 != 0)
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(style)
    }

    static func value(_ value: CharacteristicValue?) -> String {
        guard let value, let kind = value.kind else { return "-" }
        switch kind {
        case .boolValue(let bool): return "\(bool)"
        case .signedValue(let int): return "\(int)"
        case .unsignedValue(let int): return "\(int)"
        case .floatValue(let float): return "\(float)"
        case .stringValue(let string): return "\"\(string)\""
        case .dataValue(let data): return "\(data.count) bytes"
        }
    }
}

/// Finding objects by what a person types: an id, or a name compared like HomeKit compares names
/// (case, spaces and apostrophes ignored).
enum Resolve {
    static func key(_ name: String) -> String {
        name.lowercased().filter { $0 != " " && $0 != "'" && $0 != "\u{2019}" }
    }

    static func pick<T>(_ text: String, _ what: String, in items: [T], id: (T) -> Data, name: (T) -> String) throws -> T
    {
        if let uuid = typedID(text), let found = items.first(where: { id($0).uuid == uuid }) { return found }
        let matches = items.filter { key(name($0)) == key(text) }
        guard let found = matches.first else {
            throw CallFailed(
                message: "no \(what) named \"\(text)\" (known: \(items.map(name).joined(separator: ", ")))"
            )
        }
        return found
    }

    static func home(_ text: String, _ client: HomeClient) async throws -> Home {
        let homes = try await client.listHomes()
        let summary = try pick(text, "home", in: homes, id: \.id, name: \.name)
        return try await client.home(summary.id.uuid).get()
    }

    /// The home a person named, and the handle to call it through.
    static func homeHandle(_ text: String, _ client: HomeClient) async throws -> (Home, HomeHandle) {
        let found = try await home(text, client)
        return (found, client.home(found.id.uuid))
    }

    /// An id as a person types it: a UUID, or as `--json` prints it (protobuf's JSON mapping: the 16
    /// bytes in base64); `nil` for anything else.
    static func typedID(_ text: String) -> UUID? {
        if let id = UUID(uuidString: text) { return id }
        if let bytes = Data(base64Encoded: text), let id = UUID(data: bytes) { return id }
        return nil
    }

    /// An id typed as ``typedID(_:)`` takes it, or a usage error.
    static func uuid(_ text: String, _ what: String) throws -> UUID {
        guard let id = typedID(text) else {
            throw ValidationError("the \(what) id must be a UUID (or the base64 --json prints): \(text)")
        }
        return id
    }

    static func zone(_ text: String, in home: Home) throws -> Zone {
        try pick(text, "zone", in: home.zones, id: \.id, name: \.name)
    }

    /// A service by name or id, on one accessory or anywhere in the home.
    static func service(_ text: String, in home: Home) throws -> Service {
        try pick(text, "service", in: home.accessories.flatMap(\.services), id: \.id, name: \.name)
    }

    static let characteristicHelp: ArgumentHelp =
        "The characteristic's id, or ACCESSORY/TYPE with the type's catalog name (\"Desk Lamp/On\", see `accessory list`)."

    /// A characteristic by id, or as "NAME/TYPE": NAME an accessory's or a service's name in the home
    /// and TYPE the characteristic's type by catalog name or UUID ("Desk Lamp/Brightness").
    static func characteristic(_ text: String, in home: Home) throws -> UUID {
        if let id = typedID(text) { return id }
        guard let slash = text.lastIndex(of: "/") else {
            throw ValidationError(
                "the characteristic must be an id or ACCESSORY/TYPE, e.g. \"Desk Lamp/On\" (see `accessory list`): \(text)"
            )
        }
        let owner = String(text[..<slash])
        let type = String(text[text.index(after: slash)...])
        func matching(_ services: [Service]) -> [Characteristic] {
            services.flatMap(\.characteristics).filter { CatalogNames.characteristic($0.type, isNamed: type) }
        }
        // A service's name first (it tells apart two services of one accessory with the same type),
        // then the accessory's, whose first service is usually named like it.
        let named = home.accessories.flatMap(\.services).filter { key($0.name) == key(owner) }
        var candidates = named
        var matches = matching(named)
        if matches.isEmpty {
            candidates = try accessory(owner, in: home).services
            matches = matching(candidates)
        }
        guard matches.count == 1 else {
            let known = candidates.flatMap(\.characteristics).map { CatalogNames.characteristicName($0.type) }
            throw CallFailed(
                message: matches.isEmpty
                    ? "\"\(owner)\" has no characteristic \"\(type)\" (it has: \(known.joined(separator: ", ")))"
                    : "\"\(owner)\" has \(matches.count) characteristics \"\(type)\": name the service, or give the id"
            )
        }
        return matches[0].id.uuid
    }

    static func room(_ text: String, in home: Home) throws -> Room {
        try pick(text, "room", in: [home.roomForEntireHome] + home.rooms, id: \.id, name: \.name)
    }

    static func accessory(_ text: String, in home: Home) throws -> Accessory {
        try pick(text, "accessory", in: home.accessories, id: \.id, name: \.name)
    }

    /// A member of the home by their user id in it or their name.
    static func user(_ text: String, in home: Home) throws -> User {
        try pick(text, "user", in: home.users, id: \.id, name: \.name)
    }

    /// An account by id, or by name (listing accounts is the owner's).
    static func account(_ text: String, _ client: HomeClient) async throws -> Data {
        if let uuid = typedID(text) { return uuid.data }
        let accounts = try await client.listAccounts()
        return try pick(text, "account", in: accounts, id: \.id, name: \.name).id
    }
}
