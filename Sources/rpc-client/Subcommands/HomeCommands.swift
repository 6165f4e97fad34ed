import ArgumentParser
import Foundation
import HomeClient
import HomeProto

/// `rpc-client home …`
struct HomeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "home",
        abstract: "List, add, show, rename and remove homes.",
        subcommands: [List.self, Add.self, Show.self, Rename.self, Remove.self, SetPrimary.self, SetTimeZone.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Your homes.")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            let homes = try await connection.withHomeClient { try await $0.listHomes() }
            if connection.json {
                var response = Home_V1_ListHomesResponse()
                response.homes = homes
                try Output.json(response)
                return
            }
            Output.table(
                ["NAME", "ROLE", "PRIMARY", "TIME ZONE", "ID"],
                homes.map {
                    [
                        $0.name, $0.role == .administrator ? "administrator" : "guest", $0.primary ? "yes" : "",
                        $0.timeZone, Output.id($0.id),
                    ]
                }
            )
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a home you administer.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "Its name.") var name: String

        func run() async throws {
            let home = try await connection.withHomeClient { try await $0.addHome(named: name) }
            if connection.json {
                try Output.json(home)
            } else {
                print("added home \"\(home.name)\" \(Output.id(home.id))")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A home with its rooms, accessories and users.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The home's name or id.") var home: String

        func run() async throws {
            let found = try await connection.withHomeClient { try await Resolve.home(home, $0) }
            if connection.json {
                try Output.json(found)
                return
            }
            print(
                "home \"\(found.name)\" \(Output.id(found.id))  time zone \(found.timeZone)  revision \(found.revision)"
            )
            print("\nrooms")
            Output.table(
                ["NAME", "ACCESSORIES", "ID"],
                ([found.roomForEntireHome] + found.rooms).map {
                    [$0.name, "\($0.accessoryIds.count)", Output.id($0.id)]
                }
            )
            if !found.zones.isEmpty {
                print("\nzones")
                Output.table(
                    ["NAME", "ROOMS", "ID"],
                    found.zones.map { zone in
                        let names = zone.roomIds.map { id in found.rooms.first { $0.id == id }?.name ?? Output.id(id) }
                        return [zone.name, names.joined(separator: ", "), Output.id(zone.id)]
                    }
                )
            }
            if !found.accessories.isEmpty {
                print("\naccessories")
                Output.table(
                    ["NAME", "ROOM", "REACHABLE", "ID"],
                    found.accessories.map { accessory in
                        let room =
                            ([found.roomForEntireHome] + found.rooms).first { $0.id == accessory.roomID }?.name ?? ""
                        return [accessory.name, room, accessory.reachable ? "yes" : "no", Output.id(accessory.id)]
                    }
                )
            }
            print("\nusers")
            Output.users(of: found)
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a home.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The home's name or id.") var home: String
        @Argument(help: "The new name.") var name: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                _ = try await client.home(found.id.uuid).rename(to: name)
            }
            if !connection.json { print("renamed") }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a home (its owner) or leave it (anyone else)."
        )
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The home's name or id.") var home: String

        func run() async throws {
            let removed = try await connection.withHomeClient { client in
                try await client.home(try await Resolve.home(home, client).id.uuid).remove()
            }
            if !connection.json { print(removed ? "removed" : "left the home") }
        }
    }

    struct SetPrimary: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-primary",
            abstract: "Make a home your primary home."
        )
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The home's name or id.") var home: String

        func run() async throws {
            try await connection.withHomeClient { client in
                try await client.home(try await Resolve.home(home, client).id.uuid).makePrimary()
            }
        }
    }

    struct SetTimeZone: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-time-zone",
            abstract: "Set a home's IANA time zone."
        )
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The home's name or id.") var home: String
        @Argument(help: "e.g. Europe/Berlin") var timeZone: String

        func run() async throws {
            try await connection.withHomeClient { client in
                try await client.home(try await Resolve.home(home, client).id.uuid).setTimeZone(timeZone)
            }
        }
    }
}

/// `rpc-client room …`
struct RoomCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "room",
        abstract: "Add, rename and remove rooms.",
        subcommands: [Add.self, Rename.self, Remove.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a room.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The room's name.") var name: String

        func run() async throws {
            let room = try await connection.withHomeClient { client in
                try await client.home(try await Resolve.home(home, client).id.uuid).addRoom(named: name)
            }
            if connection.json {
                try Output.json(room)
            } else {
                print("added room \"\(room.name)\" \(Output.id(room.id))")
            }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a room.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The room's name or id.") var room: String
        @Argument(help: "The new name.") var name: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                _ = try await client.home(found.id.uuid).renameRoom(try Resolve.room(room, in: found).id.uuid, to: name)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a room (its accessories move to the default room)."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The room's name or id.") var room: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                try await client.home(found.id.uuid).removeRoom(try Resolve.room(room, in: found).id.uuid)
            }
        }
    }
}

/// `rpc-client zone …`
struct ZoneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zone",
        abstract: "Add, rename and remove zones; put rooms in them and take them out.",
        subcommands: [Add.self, Rename.self, Remove.self, AddRoom.self, RemoveRoom.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a zone.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The zone's name.") var name: String

        func run() async throws {
            let zone = try await connection.withHomeClient { client in
                try await client.home(try await Resolve.home(home, client).id.uuid).addZone(named: name)
            }
            if connection.json {
                try Output.json(zone)
            } else {
                print("added zone \"\(zone.name)\" \(Output.id(zone.id))")
            }
        }
    }

    struct AddRoom: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add-room", abstract: "Put a room in a zone.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The zone's name or id.") var zone: String
        @Argument(help: "The room's name or id.") var room: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                let zoneID = try Resolve.pick(zone, "zone", in: found.zones, id: \.id, name: \.name).id
                _ = try await client.home(found.id.uuid).addRoom(
                    try Resolve.room(room, in: found).id.uuid,
                    toZone: zoneID.uuid
                )
            }
        }
    }
}

extension ZoneCommand {
    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a zone.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The zone's name or id.") var zone: String
        @Argument(help: "Its new name.") var name: String

        func run() async throws {
            let renamed = try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                return try await handle.renameZone(try Resolve.zone(zone, in: found).id.uuid, to: name)
            }
            if connection.json { try Output.json(renamed) } else { print("renamed zone to \"\(renamed.name)\"") }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a zone (its rooms stay).")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The zone's name or id.") var zone: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                try await handle.removeZone(try Resolve.zone(zone, in: found).id.uuid)
            }
        }
    }

    struct RemoveRoom: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-room",
            abstract: "Take a room out of a zone."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The zone's name or id.") var zone: String
        @Argument(help: "The room's name or id.") var room: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                _ = try await handle.removeRoom(
                    try Resolve.room(room, in: found).id.uuid,
                    fromZone: try Resolve.zone(zone, in: found).id.uuid
                )
            }
        }
    }
}
