import ArgumentParser
import Foundation
import HomeClient
import HomeProto

/// `rpc-client accessory …`
struct AccessoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accessory",
        abstract:
            "Browse, add, list, move, rename, identify, unblock and remove accessories; simulate accessories.",
        subcommands: [
            List.self, Browse.self, Add.self, Assign.self, Rename.self, Identify.self, Unblock.self, Remove.self,
            Simulate.self,
        ]
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
                            accessory.name, service.name, CatalogNames.characteristicName(characteristic.type),
                            Output.value(characteristic.hasValue ? characteristic.value : nil),
                            Output.id(characteristic.id),
                        ])
                    }
                }
            }
            Output.table(["ACCESSORY", "SERVICE", "CHARACTERISTIC", "VALUE", "CHARACTERISTIC ID"], rows)
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
        abstract: "Read and write characteristic values, follow them, show their metadata.",
        subcommands: [Read.self, Write.self, Notify.self, Metadata.self]
    )

    struct Read: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The cached value, its time and reachability.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Flag(help: "Ask the accessory instead of the cache.") var fresh = false
        @Argument(help: Resolve.characteristicHelp) var characteristic: String

        func run() async throws {
            let response = try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                return try await handle.readCharacteristic(
                    try Resolve.characteristic(characteristic, in: found),
                    fresh: fresh
                )
            }
            if connection.json {
                try Output.json(response)
            } else {
                print(
                    "\(Output.value(response.hasValue ? response.value : nil))  (set \(response.valueTimeMs == 0 ? "never" : Output.date(response.valueTimeMs)), \(response.reachable ? "reachable" : "unreachable"))"
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
        @Argument(help: Resolve.characteristicHelp) var characteristic: String
        @Argument(help: "The value.") var value: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                _ = try await handle.writeCharacteristic(
                    try Resolve.characteristic(characteristic, in: found),
                    Self.parse(value)
                )
            }
        }
    }
}

extension AccessoryCommand {
    struct Identify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Ask an accessory to identify itself (blink, beep).")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The accessory's name or id.") var accessory: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                try await handle.identifyAccessory(try Resolve.accessory(accessory, in: found).id.uuid)
            }
        }
    }

    struct Unblock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unblock an accessory.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The accessory's name or id.") var accessory: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                _ = try await handle.unblockAccessory(try Resolve.accessory(accessory, in: found).id.uuid)
            }
        }
    }
}

/// `rpc-client service …`
struct ServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service",
        abstract: "Find services by type; rename them; set what a generic outlet or switch controls.",
        subcommands: [List.self, Rename.self, Associate.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The home's services of the given types (all without --type)."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Option(help: "A service type: its catalog name (lightbulb, outlet) or UUID (repeatable).") var type: [String] =
            []

        func run() async throws {
            let services = try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                return type.isEmpty
                    ? found.accessories.flatMap(\.services)
                    : try await handle.services(ofTypes: type.map(CatalogNames.serviceTypeUUID))
            }
            if connection.json {
                var response = Home_V1_ListServicesWithTypesResponse()
                response.services = services
                try Output.json(response)
                return
            }
            Output.table(
                ["NAME", "TYPE", "ASSOCIATED", "ACCESSORY", "ID"],
                services.map {
                    [
                        $0.name, CatalogNames.serviceName($0.type), CatalogNames.serviceName($0.associatedType),
                        Output.id($0.accessoryID), Output.id($0.id),
                    ]
                }
            )
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a service.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The service's name or id.") var service: String
        @Argument(help: "Its new name.") var name: String

        func run() async throws {
            let renamed = try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                return try await handle.renameService(try Resolve.service(service, in: found).id.uuid, to: name)
            }
            if connection.json { try Output.json(renamed) } else { print("renamed service to \"\(renamed.name)\"") }
        }
    }

    struct Associate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the service type a generic outlet, switch or contact sensor controls (--clear to unset)."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The service's name or id.") var service: String
        @Argument(help: "The controlled service type: its catalog name (lightbulb, fan) or UUID.") var type: String?
        @Flag(help: "Unset the associated type.") var clear = false

        func validate() throws {
            guard (type != nil) != clear else { throw ValidationError("give a type or --clear, not both") }
        }

        func run() async throws {
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                _ = try await handle.updateAssociatedServiceType(
                    try Resolve.service(service, in: found).id.uuid,
                    to: try type.map(CatalogNames.serviceTypeUUID)
                )
            }
        }
    }
}

extension CharacteristicCommand {
    struct Notify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn value notifications for your account on (or --off): `watch` then shows its changes."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: Resolve.characteristicHelp) var characteristic: String
        @Flag(help: "Turn them off.") var off = false

        func run() async throws {
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                try await handle.enableNotification(try Resolve.characteristic(characteristic, in: found), !off)
            }
        }
    }

    struct Metadata: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Type, properties, format, units and limits.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: Resolve.characteristicHelp) var characteristic: String

        func run() async throws {
            let metadata = try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                return try await handle.characteristicMetadata(try Resolve.characteristic(characteristic, in: found))
            }
            // Metadata has many optional parts: JSON shows them all either way.
            try Output.json(metadata)
        }
    }
}
