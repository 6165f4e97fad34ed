import ArgumentParser
import Foundation
import HomeClient
import HomeProto

/// `rpc-client service-group …`
struct ServiceGroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service-group",
        abstract: "List, add, rename and remove service groups; put services in them and take them out.",
        subcommands: [List.self, Add.self, Rename.self, Remove.self, AddService.self, RemoveService.self]
    )

    static func group(_ text: String, in home: Home) throws -> ServiceGroup {
        try Resolve.pick(text, "service group", in: home.serviceGroups, id: \.id, name: \.name)
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The home's service groups.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String

        func run() async throws {
            let found = try await connection.withHomeClient { try await Resolve.home(home, $0) }
            if connection.json {
                var response = Home_V1_GetHomeResponse()
                response.home.serviceGroups = found.serviceGroups
                try Output.json(response)
                return
            }
            Output.table(
                ["NAME", "SERVICES", "ID"],
                found.serviceGroups.map { group in
                    let services = found.accessories.flatMap(\.services)
                    let names = group.serviceIds.map { id in services.first { $0.id == id }?.name ?? Output.id(id) }
                    return [group.name, names.joined(separator: ", "), Output.id(group.id)]
                }
            )
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a service group.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "Its name.") var name: String

        func run() async throws {
            let group = try await connection.withHomeClient { client in
                try await client.home(try await Resolve.home(home, client).id.uuid).addServiceGroup(named: name)
            }
            if connection.json {
                try Output.json(group)
            } else {
                print("added service group \"\(group.name)\" \(Output.id(group.id))")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a service group.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The group's name or id.") var group: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                try await client.home(found.id.uuid).removeServiceGroup(
                    try ServiceGroupCommand.group(group, in: found).id.uuid
                )
            }
        }
    }

    struct AddService: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-service",
            abstract: "Put an accessory's services (all, or one by name) in a group."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The group's name or id.") var group: String
        @Argument(help: "The accessory's name or id.") var accessory: String
        @Option(help: "Only the service with this name or id.") var service: String?

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                let groupID = try ServiceGroupCommand.group(group, in: found).id.uuid
                let services = try Resolve.accessory(accessory, in: found).services
                let chosen =
                    try service.map { [try Resolve.pick($0, "service", in: services, id: \.id, name: \.name)] }
                    ?? services
                for item in chosen {
                    _ = try await client.home(found.id.uuid).addService(item.id.uuid, toGroup: groupID)
                }
            }
        }
    }
}

extension ServiceGroupCommand {
    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a service group.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The group's name or id.") var group: String
        @Argument(help: "Its new name.") var name: String

        func run() async throws {
            let renamed = try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                return try await handle.renameServiceGroup(
                    try ServiceGroupCommand.group(group, in: found).id.uuid,
                    to: name
                )
            }
            if connection.json {
                try Output.json(renamed)
            } else {
                print("renamed service group to \"\(renamed.name)\"")
            }
        }
    }

    struct RemoveService: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-service",
            abstract: "Take a service (by name or id) out of a group."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The group's name or id.") var group: String
        @Argument(help: "The service's name or id.") var service: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                _ = try await handle.removeService(
                    try Resolve.service(service, in: found).id.uuid,
                    fromGroup: try ServiceGroupCommand.group(group, in: found).id.uuid
                )
            }
        }
    }
}
