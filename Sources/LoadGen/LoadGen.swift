import ArgumentParser

/// `loadgen`: drives a HomeRPC server with simulated clients and reports throughput and latency.
@main
struct LoadGen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loadgen",
        abstract: "Generate load against a HomeRPC server.",
        subcommands: [UnaryLoad.self, ConnectLoad.self, FanoutLoad.self, FleetLoad.self]
    )
}
