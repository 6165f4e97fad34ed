import ArgumentParser
import Foundation
import HomeClient
import HomeProto

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
            Output.table(
                ["NAME", "ENABLED", "FIRE DATE (UTC)", "REPEATS", "LAST FIRED", "ACTION SETS", "ID"],
                found.triggers.map { trigger in
                    [
                        trigger.name, trigger.enabled ? "yes" : "no", Output.date(trigger.fireDateMs),
                        trigger.hasRecurrence ? "every \(trigger.recurrence.count) \(trigger.recurrence.unit)" : "once",
                        trigger.hasLastFireDateMs ? Output.date(trigger.lastFireDateMs) : "never",
                        trigger.actionSetIds.map { id in
                            found.actionSets.first { $0.id == id }?.name ?? Output.id(id)
                        }.joined(separator: ", "),
                        Output.id(trigger.id),
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
