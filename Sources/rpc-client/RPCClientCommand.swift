import ArgumentParser

/// `rpc-client`: calls a HomeRPC server from the command line.
@main
struct RPCClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rpc-client",
        abstract: "Call a HomeRPC server.",
        subcommands: [Health.self, Info.self]
    )
}

/// Where to connect, shared by every subcommand.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "Server address: HOST:PORT or unix:PATH.")
    var endpoint = "127.0.0.1:7420"

    @Option(help: "Seconds to wait for the answer.")
    var timeout = 5.0
}
