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
                found.serviceGroups.map { [$0.name, "\($0.serviceIds.count)", Output.id($0.id)] }
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

/// `rpc-client action-set …`
struct ActionSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "action-set",
        abstract: "List, add, rename, remove and execute action sets; add, change and remove their writes.",
        subcommands: [
            List.self, Add.self, Rename.self, Remove.self, AddAction.self, SetAction.self, RemoveAction.self,
            Execute.self,
        ]
    )

    static func actionSet(_ text: String, in home: Home) throws -> ActionSet {
        try Resolve.pick(text, "action set", in: home.actionSets, id: \.id, name: \.name)
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The home's action sets.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String

        func run() async throws {
            let found = try await connection.withHomeClient { try await Resolve.home(home, $0) }
            if connection.json {
                var response = Home_V1_GetHomeResponse()
                response.home.actionSets = found.actionSets
                try Output.json(response)
                return
            }
            Output.table(
                ["NAME", "ACTIONS", "ID"],
                found.actionSets.map { [$0.name, "\($0.actions.count)", Output.id($0.id)] }
            )
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an action set.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "Its name.") var name: String

        func run() async throws {
            let actionSet = try await connection.withHomeClient { client in
                try await client.home(try await Resolve.home(home, client).id.uuid).addActionSet(named: name)
            }
            if connection.json {
                try Output.json(actionSet)
            } else {
                print("added action set \"\(actionSet.name)\" \(Output.id(actionSet.id))")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an action set (not a built-in one).")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The action set's name or id.") var actionSet: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                try await client.home(found.id.uuid).removeActionSet(
                    try ActionSetCommand.actionSet(actionSet, in: found).id.uuid
                )
            }
        }
    }

    struct AddAction: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-action",
            abstract: "Add \"write VALUE to a characteristic\" (ids from `accessory list`) to an action set."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The action set's name or id.") var actionSet: String
        @Argument(help: "The characteristic's id.") var characteristic: String
        @Argument(help: "The value: true/false, an integer, a decimal or text.") var value: String

        func run() async throws {
            let id = try Resolve.uuid(characteristic, "characteristic")
            let actionID = UUID()
            let updated = try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                return try await client.home(found.id.uuid).addAction(
                    writing: CharacteristicCommand.Write.parse(value),
                    to: id,
                    in: try ActionSetCommand.actionSet(actionSet, in: found).id.uuid,
                    actionID: actionID
                )
            }
            // The new action's id is what set-action and remove-action take.
            if connection.json {
                try Output.json(updated)
            } else {
                print("added action \(actionID.uuidString) to action set \"\(updated.name)\"")
            }
        }
    }

    struct Execute: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run an action set's writes.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The action set's name or id.") var actionSet: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                try await client.home(found.id.uuid).executeActionSet(
                    try ActionSetCommand.actionSet(actionSet, in: found).id.uuid
                )
            }
        }
    }
}

/// `rpc-client trigger …`
struct TriggerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trigger",
        abstract: "List, add, change, enable, disable and remove timer triggers.",
        subcommands: [
            List.self, Add.self, Rename.self, SetFireDate.self, SetRecurrence.self, AddActionSet.self,
            RemoveActionSet.self, Enable.self, Disable.self, Remove.self,
        ]
    )

    static func trigger(_ text: String, in home: Home) throws -> TimerTrigger {
        try Resolve.pick(text, "trigger", in: home.triggers, id: \.id, name: \.name)
    }

    /// `--at`: ISO 8601, on a whole minute.
    static func date(_ text: String) throws -> Date {
        guard let date = ISO8601DateFormatter().date(from: text) else {
            throw ValidationError("--at must be ISO 8601, e.g. 2027-01-15T07:00:00Z")
        }
        return date
    }

    /// `--every`: "COUNT minute|hour|day|week" ("days" as well as "day").
    static func recurrence(_ text: String) throws -> Recurrence {
        let parts = text.split(separator: " ")
        let units: [String: Recurrence.Unit] = ["minute": .minute, "hour": .hour, "day": .day, "week": .week]
        var word = parts.count == 2 ? parts[1].lowercased() : ""
        if word.hasSuffix("s") { word.removeLast() }
        guard parts.count == 2, let count = Int64(parts[0]), let unit = units[word] else {
            throw ValidationError("--every must be COUNT minute|hour|day|week, e.g. \"1 day\"")
        }
        return Recurrence(count, unit)
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The home's timer triggers.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String

        func run() async throws {
            let found = try await connection.withHomeClient { try await Resolve.home(home, $0) }
            if connection.json {
                var response = Home_V1_GetHomeResponse()
                response.home.triggers = found.triggers
                try Output.json(response)
                return
            }
            let formatter = ISO8601DateFormatter()
            Output.table(
                ["NAME", "ENABLED", "FIRE DATE (UTC)", "REPEATS", "ID"],
                found.triggers.map {
                    [
                        $0.name, $0.enabled ? "yes" : "no",
                        formatter.string(from: Date(timeIntervalSince1970: Double($0.fireDateMs) / 1000)),
                        $0.hasRecurrence ? "every \($0.recurrence.count) \($0.recurrence.unit)" : "once",
                        Output.id($0.id),
                    ]
                }
            )
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a disabled trigger for one or more action sets.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "Its name.") var name: String
        @Option(help: "When it first fires: ISO 8601, on a whole minute, e.g. 2027-01-15T07:00:00Z.") var at: String
        @Option(help: "Repeat: COUNT minute|hour|day|week, e.g. \"1 day\".") var every: String?
        @Option(parsing: .upToNextOption, help: "Action sets it runs (names or ids).") var actionSets: [String] = []

        func run() async throws {
            let date = try TriggerCommand.date(at)
            let recurrence = try every.map(TriggerCommand.recurrence)
            let trigger = try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                let handle = client.home(found.id.uuid)
                let trigger = try await handle.addTrigger(named: name, fireDate: date, recurrence: recurrence)
                for actionSet in actionSets {
                    _ = try await handle.addActionSet(
                        try ActionSetCommand.actionSet(actionSet, in: found).id.uuid,
                        toTrigger: trigger.id.uuid
                    )
                }
                return trigger
            }
            if connection.json {
                try Output.json(trigger)
            } else {
                print("added trigger \"\(trigger.name)\" \(Output.id(trigger.id)) (disabled)")
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a trigger.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The trigger's name or id.") var trigger: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                _ = try await client.home(found.id.uuid).enableTrigger(
                    try TriggerCommand.trigger(trigger, in: found).id.uuid,
                    true
                )
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a trigger.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The trigger's name or id.") var trigger: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                _ = try await client.home(found.id.uuid).enableTrigger(
                    try TriggerCommand.trigger(trigger, in: found).id.uuid,
                    false
                )
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a trigger.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The trigger's name or id.") var trigger: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                try await client.home(found.id.uuid).removeTrigger(
                    try TriggerCommand.trigger(trigger, in: found).id.uuid
                )
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

extension ActionSetCommand {
    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename an action set.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The action set's name or id.") var actionSet: String
        @Argument(help: "Its new name.") var name: String

        func run() async throws {
            let renamed = try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                return try await handle.renameActionSet(
                    try ActionSetCommand.actionSet(actionSet, in: found).id.uuid,
                    to: name
                )
            }
            if connection.json { try Output.json(renamed) } else { print("renamed action set to \"\(renamed.name)\"") }
        }
    }

    struct SetAction: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-action",
            abstract: "Change the value an action writes (action ids from `action-set list --json`)."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The action set's name or id.") var actionSet: String
        @Argument(help: "The action's id.") var action: String
        @Argument(help: "The value: true/false, an integer, a decimal or text.") var value: String

        func run() async throws {
            let actionID = try Resolve.uuid(action, "action")
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                _ = try await handle.updateTargetValue(
                    of: actionID,
                    in: try ActionSetCommand.actionSet(actionSet, in: found).id.uuid,
                    to: CharacteristicCommand.Write.parse(value)
                )
            }
        }
    }

    struct RemoveAction: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove-action", abstract: "Remove an action.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The action set's name or id.") var actionSet: String
        @Argument(help: "The action's id.") var action: String

        func run() async throws {
            let actionID = try Resolve.uuid(action, "action")
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                _ = try await handle.removeAction(
                    actionID,
                    from: try ActionSetCommand.actionSet(actionSet, in: found).id.uuid
                )
            }
        }
    }
}

extension TriggerCommand {
    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a trigger.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The trigger's name or id.") var trigger: String
        @Argument(help: "Its new name.") var name: String

        func run() async throws {
            let renamed = try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                return try await handle.renameTrigger(try TriggerCommand.trigger(trigger, in: found).id.uuid, to: name)
            }
            if connection.json { try Output.json(renamed) } else { print("renamed trigger to \"\(renamed.name)\"") }
        }
    }

    struct SetFireDate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-fire-date",
            abstract: "Change when a trigger fires."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The trigger's name or id.") var trigger: String
        @Option(help: "ISO 8601, on a whole minute, e.g. 2027-01-15T07:00:00Z.") var at: String

        func run() async throws {
            let date = try TriggerCommand.date(at)
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                _ = try await handle.updateFireDate(
                    of: try TriggerCommand.trigger(trigger, in: found).id.uuid,
                    to: date
                )
            }
        }
    }

    struct SetRecurrence: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-recurrence",
            abstract: "Make a trigger repeat (--every \"1 day\"), or fire once (--once)."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The trigger's name or id.") var trigger: String
        @Option(help: "COUNT minute|hour|day|week.") var every: String?
        @Flag(help: "Fire once, without repeating.") var once = false

        func validate() throws {
            guard (every != nil) != once else { throw ValidationError("give exactly one of --every and --once") }
        }

        func run() async throws {
            let recurrence = try every.map(TriggerCommand.recurrence)
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                _ = try await handle.updateRecurrence(
                    of: try TriggerCommand.trigger(trigger, in: found).id.uuid,
                    to: recurrence
                )
            }
        }
    }

    struct AddActionSet: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-action-set",
            abstract: "Make a trigger run an action set."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The trigger's name or id.") var trigger: String
        @Argument(help: "The action set's name or id.") var actionSet: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                _ = try await handle.addActionSet(
                    try ActionSetCommand.actionSet(actionSet, in: found).id.uuid,
                    toTrigger: try TriggerCommand.trigger(trigger, in: found).id.uuid
                )
            }
        }
    }

    struct RemoveActionSet: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-action-set",
            abstract: "Stop a trigger running an action set."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The trigger's name or id.") var trigger: String
        @Argument(help: "The action set's name or id.") var actionSet: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let (found, handle) = try await Resolve.homeHandle(home, client)
                _ = try await handle.removeActionSet(
                    try ActionSetCommand.actionSet(actionSet, in: found).id.uuid,
                    fromTrigger: try TriggerCommand.trigger(trigger, in: found).id.uuid
                )
            }
        }
    }
}
