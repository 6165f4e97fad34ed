import ArgumentParser
import HomeClient
import HomeProto

/// `rpc-client backup NAME`
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Have the server write a consistent copy of its store to a new file (owner only).",
        discussion: """
            The file goes to the server's backup directory (homed --backup-directory, by default the \
            store's own directory), under NAME: a plain file name, where nothing exists yet. Every \
            change acknowledged before the command is in the copy. Raise --timeout for a large store.
            """
    )
    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The new file's name in the server's backup directory (no '/').") var name: String

    func validate() throws {
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else {
            throw ValidationError(
                "give a plain file name (no '/', not starting with '.'): the server picks the directory"
            )
        }
    }

    func run() async throws {
        let (path, size) = try await connection.withHomeClient { try await $0.backupStore(named: name) }
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
