import ArgumentParser
import Foundation
import HomeClient
import HomeProto

/// `rpc-client action-set …`
struct ActionSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "action-set",
        abstract: "List, show, add, rename, remove and execute action sets; add, change and remove their writes.",
        subcommands: [
            List.self, Show.self, Add.self, Rename.self, Remove.self, AddAction.self, SetAction.self,
            RemoveAction.self, Execute.self,
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
                ["NAME", "ACTIONS", "LAST RUN (UTC)", "ID"],
                found.actionSets.map {
                    [$0.name, "\($0.actions.count)", ActionSetCommand.lastRun($0), Output.id($0.id)]
                }
            )
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "An action set's writes, with the action ids that set-action and remove-action take."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The action set's name or id.") var actionSet: String

        func run() async throws {
            let found = try await connection.withHomeClient { try await Resolve.home(home, $0) }
            let shown = try ActionSetCommand.actionSet(actionSet, in: found)
            if connection.json {
                try Output.json(shown)
                return
            }
            let kind = shown.type == .userDefined ? "" : "  built in"
            print(
                "action set \"\(shown.name)\" \(Output.id(shown.id))\(kind)  last run \(ActionSetCommand.lastRun(shown))\n"
            )
            Output.table(
                ["ACTION ID", "CHARACTERISTIC", "VALUE"],
                shown.actions.map {
                    [
                        Output.id($0.id), Output.characteristic($0.characteristicID, in: found),
                        Output.value($0.targetValue),
                    ]
                }
            )
        }
    }

    /// When an action set last ran: "running", its time, or "never".
    static func lastRun(_ actionSet: ActionSet) -> String {
        if actionSet.executing { return "running" }
        return actionSet.hasLastExecutionMs ? Output.date(actionSet.lastExecutionMs) : "never"
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
            abstract: "Add \"write VALUE to a characteristic\" to an action set."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The action set's name or id.") var actionSet: String
        @Argument(help: Resolve.characteristicHelp) var characteristic: String
        @Argument(help: "The value: true/false, an integer, a decimal or text.") var value: String

        func run() async throws {
            let actionID = UUID.random()
            let updated = try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                return try await client.home(found.id.uuid).addAction(
                    writing: CharacteristicCommand.Write.parse(value),
                    to: try Resolve.characteristic(characteristic, in: found),
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
                do {
                    try await client.home(found.id.uuid).executeActionSet(
                        try ActionSetCommand.actionSet(actionSet, in: found).id.uuid
                    )
                } catch let error as HomeClientError where !error.itemResults.isEmpty {
                    // 63 and 64 carry each write's outcome: say which failed, and why.
                    let lines = error.itemResults.map { item in
                        let outcome = item.homekitCode == 0 ? "done" : "HomeKit \(item.homekitCode): \(item.message)"
                        return "\n  \(Output.characteristic(item.objectID, in: found)): \(outcome)"
                    }
                    throw CallFailed(message: error.description + lines.joined())
                }
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
