import ArgumentParser
import HomeClient
import HomeProto

/// `rpc-client backup PATH`
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Have the server write a consistent copy of its store to a new file (owner only).",
        discussion: """
            The path is on the server's machine, so it must be absolute; the server refuses a path \
            where something exists. Every change acknowledged before the command is in the copy. \
            Raise --timeout for a large store.
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "Absolute path of the new file, on the server's machine.") var path: String

    func validate() throws {
        guard path.hasPrefix("/") else {
            throw ValidationError("the path is on the server's machine: give it absolute")
        }
    }

    func run() async throws {
        let size = try await connection.withHomeClient { try await $0.backupStore(to: path) }
        if connection.json {
            var response = Home_V1_BackupStoreResponse()
            response.path = path
            response.sizeBytes = size
            try Output.json(response)
        } else {
            print("wrote \(path) (\(size) bytes)")
        }
    }
}
