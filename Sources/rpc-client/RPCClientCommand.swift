import ArgumentParser
import TLSOptions

/// `rpc-client`: calls a HomeRPC server from the command line.
@main
struct RPCClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rpc-client",
        abstract: "Call a HomeRPC server.",
        discussion: """
            Exit codes: 0 success, 64 usage error, 1 the call failed (the server's status is printed), \
            2 health: not serving.
            """,
        subcommands: [
            HomeCommand.self, RoomCommand.self, ZoneCommand.self, AccessoryCommand.self, ServiceCommand.self,
            CharacteristicCommand.self, ServiceGroupCommand.self, ActionSetCommand.self, TriggerCommand.self,
            UserCommand.self, AccountCommand.self, Watch.self, Call.self, Methods.self,
            Backup.self, Health.self, Info.self,
        ]
    )
}

/// Where to connect, shared by every subcommand.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "Server address: HOST:PORT or unix:PATH.")
    var endpoint = "127.0.0.1:7420"

    @Option(help: "Seconds to wait for the answer.")
    var timeout = 5.0

    @Option(
        help: """
            File holding the bearer token. Default: $HOMERPC_TOKEN if set, else homed-owner.token in \
            the working directory (the file the server writes on its first start); with --cert and \
            neither, none: the client certificate authenticates (homed --tls-client-identities).
            """
    )
    var tokenFile: String?

    @Flag(help: "Print JSON (protobuf's JSON mapping) instead of tables.")
    var json = false

    @Option(help: "A trace id sent with the calls (trace-id); homed logs it with each call at --log-level debug.")
    var traceId: String?

    @OptionGroup(title: "TLS")
    var tls: TLSClientOptions
}
