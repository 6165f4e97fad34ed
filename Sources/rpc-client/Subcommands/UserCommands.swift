import ArgumentParser
import Foundation
import HomeClient
import HomeProto

/// `rpc-client user …`
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "A home's users: list, add (as guest or administrator), change access, remove.",
        subcommands: [List.self, Add.self, SetAccess.self, Remove.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The home's users.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String

        func run() async throws {
            let found = try await connection.withHomeClient { try await Resolve.home(home, $0) }
            if connection.json {
                var response = Home_V1_ListUsersResponse()
                response.users = found.users
                try Output.json(response)
                return
            }
            Output.users(of: found)
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an account to the home (a guest unless --administrator)."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The account's name or id.") var account: String
        @Flag(help: "Make the user an administrator.") var administrator = false

        func run() async throws {
            let user = try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                let id = try await Resolve.account(account, client)
                return try await client.home(found.id.uuid).addUser(id.uuid, administrator: administrator)
            }
            if connection.json {
                try Output.json(user)
            } else {
                print("added \(user.name) as \(user.administrator ? "administrator" : "guest")")
            }
        }
    }

    struct SetAccess: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-access",
            abstract: "Make a user an administrator or a guest."
        )
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The user's name, or their id in the home (`user list`).") var user: String
        @Argument(help: "administrator or guest") var access: String

        func validate() throws {
            guard access == "administrator" || access == "guest" else {
                throw ValidationError("access must be administrator or guest")
            }
        }

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                _ = try await client.home(found.id.uuid).updateUserAccess(
                    try Resolve.user(user, in: found).id.uuid,
                    administrator: access == "administrator"
                )
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a user from the home.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The home's name or id.") var home: String
        @Argument(help: "The user's name, or their id in the home (`user list`).") var user: String

        func run() async throws {
            try await connection.withHomeClient { client in
                let found = try await Resolve.home(home, client)
                try await client.home(found.id.uuid).removeUser(try Resolve.user(user, in: found).id.uuid)
            }
        }
    }
}

/// `rpc-client account …`
struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account",
        abstract: "Who you are; the owner creates accounts and issues their tokens.",
        subcommands: [WhoAmI.self, Create.self, List.self, IssueToken.self, ListTokens.self, RevokeToken.self]
    )

    struct WhoAmI: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "whoami",
            abstract: "The account the token belongs to."
        )
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            let account = try await connection.withHomeClient { try await $0.whoAmI() }
            if connection.json {
                try Output.json(account)
            } else {
                print("\(account.name) \(Output.id(account.id))\(account.owner ? " (owner)" : "")")
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an account (owner only).")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "Its name.") var name: String

        func run() async throws {
            let account = try await connection.withHomeClient { try await $0.createAccount(named: name) }
            if connection.json {
                try Output.json(account)
            } else {
                print("created account \(account.name) \(Output.id(account.id))")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every account (owner only).")
        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            let accounts = try await connection.withHomeClient { try await $0.listAccounts() }
            if connection.json {
                var response = Home_V1_ListAccountsResponse()
                response.accounts = accounts
                try Output.json(response)
                return
            }
            Output.table(["NAME", "OWNER", "ID"], accounts.map { [$0.name, $0.owner ? "yes" : "", Output.id($0.id)] })
        }
    }

    struct IssueToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "issue-token",
            abstract: "Issue a bearer token (for yourself, or as the owner for any account); shown once."
        )
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The account's name or id (default: yours).") var account: String?
        @Option(help: "A label list-tokens shows.") var name = ""
        @Option(
            help: ArgumentHelp(
                "What it may do: read (reads, subscriptions), control (also writes, identify, action sets) or full.",
                valueName: "scope"
            )
        )
        var scope: ScopeArgument?
        @Option(help: "A home (name or id) it may act in; repeat for more (default: every home).")
        var home: [String] = []
        @Option(help: "Seconds until it expires (default: never, or your token's expiry).")
        var expiresIn: Int64?

        enum ScopeArgument: String, ExpressibleByArgument, CaseIterable {
            case read, control, full

            var scope: TokenScope {
                switch self {
                case .read: .read
                case .control: .control
                case .full: .full
                }
            }
        }

        func run() async throws {
            let secret = try await connection.withHomeClient { client in
                var id: UUID?
                if let account { id = try await Resolve.account(account, client).uuid }
                var homes: [UUID] = []
                for home in home { homes.append(try await Resolve.home(home, client).id.uuid) }
                let limits = TokenRequestLimits(
                    name: name,
                    scope: scope?.scope ?? .unspecified,
                    homes: homes,
                    lifetime: expiresIn.map { .seconds($0) }
                )
                return try await client.issueToken(for: id, limits: limits).secret
            }
            print(secret)
        }
    }
}

extension AccountCommand {
    struct ListTokens: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list-tokens",
            abstract: "Tokens of your account (the owner: of any account), without their secrets."
        )
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The account's name or id (default: yours).") var account: String?

        func run() async throws {
            let tokens = try await connection.withHomeClient { client in
                var id: UUID?
                if let account { id = try await Resolve.account(account, client).uuid }
                return try await client.listTokens(of: id)
            }
            if connection.json {
                var response = Home_V1_ListTokensResponse()
                response.tokens = tokens
                try Output.json(response)
                return
            }
            Output.table(
                ["ID", "NAME", "SCOPE", "HOMES", "CREATED (UTC)", "EXPIRES (UTC)", "LAST USED (UTC)"],
                tokens.map { token in
                    [
                        Output.id(token.id), token.name.isEmpty ? "-" : token.name,
                        "\(token.scope)".replacingOccurrences(of: "TOKEN_SCOPE_", with: "").lowercased(),
                        token.homeIds.isEmpty ? "all" : token.homeIds.map(Output.id).joined(separator: ","),
                        Output.date(token.createdMs),
                        token.expiresMs == 0
                            ? "never" : Output.date(token.expiresMs) + (token.expired ? " (expired)" : ""),
                        token.lastUsedMs == 0 ? "never" : Output.date(token.lastUsedMs),
                    ]
                }
            )
        }
    }

    struct RevokeToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke-token",
            abstract: "Revoke a token: its connections and change streams lose their rights at once."
        )
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The token's id (from list-tokens).") var token: String

        func run() async throws {
            let id = try Resolve.uuid(token, "token")
            try await connection.withHomeClient { try await $0.revokeToken(id) }
        }
    }
}
