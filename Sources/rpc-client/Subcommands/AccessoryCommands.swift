import ArgumentParser
import Foundation
import HomeClient
import HomeProto

/// `rpc-client accessory …`
struct AccessoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accessory",
        abstract: "List accessories with their characteristics; move, rename and remove them.",
        subcommands: [List.self, Assign.self, Rename.self, Remove.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Accessories and their characteristics.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String

        func run() async throws {
            let found = try await connection.withHomeClient { try await Resolve.home(home, $0) }
            if connection.json {
                var response = Home_V1_AddAccessoryResponse()
                response.accessories = found.accessories
                try Output.json(response)
                return
            }
            var rows: [[String]] = []
            for accessory in found.accessories {
                for service in accessory.services {
                    for characteristic in service.characteristics {
                        rows.append([
                            accessory.name, service.name, characteristic.type,
                            Output.value(characteristic.hasValue ? characteristic.value : nil),
                            Output.id(characteristic.id),
                        ])
                    }
                }
            }
            Output.table(["ACCESSORY", "SERVICE", "CHARACTERISTIC TYPE", "VALUE", "CHARACTERISTIC ID"], rows)
        }
    }

    struct Assign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move an accessory to a room.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The accessory's name or id.") var accessory: String
        @Argument(help: "The room's name or id.") var room: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                _ = try await client.home(found.id.uuid).assignAccessory(
                    try Resolve.accessory(accessory, in: found).id.uuid,
                    toRoom: try Resolve.room(room, in: found).id.uuid
                )
            }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename an accessory.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The accessory's name or id.") var accessory: String
        @Argument(help: "The new name.") var name: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                _ = try await client.home(found.id.uuid).renameAccessory(
                    try Resolve.accessory(accessory, in: found).id.uuid,
                    to: name
                )
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an accessory (a bridge takes its accessories along)."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The accessory's name or id.") var accessory: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                try await client.home(found.id.uuid).removeAccessory(
                    try Resolve.accessory(accessory, in: found).id.uuid
                )
            }
        }
    }
}

/// `rpc-client characteristic …`
struct CharacteristicCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "characteristic",
        abstract: "Read and write characteristic values (ids from `accessory list`).",
        subcommands: [Read.self, Write.self]
    )

    struct Read: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The cached value, its time and reachability.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The characteristic's id.") var characteristic: String

        func run() async throws {
            guard let id = UUID(uuidString: characteristic) else {
                throw ValidationError("the characteristic id must be a UUID")
            }
            let response = try await connection.withHomeClient { client in
                try await client.home(try await Resolve.home(home, client).id.uuid).readCharacteristic(id)
            }
            if connection.json {
                try Output.json(response)
            } else {
                print(
                    "\(Output.value(response.hasValue ? response.value : nil))  (set \(response.valueTimeMs) ms, \(response.reachable ? "reachable" : "unreachable"))"
                )
            }
        }
    }

    struct Write: AsyncParsableCommand {
        /// true/false, an integer, a decimal, or else text.
        static func parse(_ value: String) -> CharacteristicValue {
            if value == "true" || value == "false" { return .bool(value == "true") }
            if let int = Int64(value) { return .int(int) }
            if let double = Double(value) { return .float(double) }
            return .string(value)
        }

        static let configuration = CommandConfiguration(
            abstract: "Write a value: true/false, an integer, a decimal or text."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The characteristic's id.") var characteristic: String
        @Argument(help: "The value.") var value: String

        func run() async throws {
            guard let id = UUID(uuidString: characteristic) else {
                throw ValidationError("the characteristic id must be a UUID")
            }
            let parsed: CharacteristicValue =
                if value == "true" || value == "false" { .bool(value == "true") } else if let int = Int64(value) {
                    .int(int)
                } else if let double = Double(value) { .float(double) } else { .string(value) }
            try await connection.withHomeClient { client in
                _ = try await client.home(try await Resolve.home(home, client).id.uuid).writeCharacteristic(id, parsed)
            }
        }
    }
}
