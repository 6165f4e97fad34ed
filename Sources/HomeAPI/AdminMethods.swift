import HomeProto
import HomeService
import RPCServer
import RPCServices

/// `home.v1.AdminService`: looking after the server's store.
enum AdminMethods {
    static let service = "home.v1.AdminService/"

    static let all: [APIMethod] = [
        // Answered when the writer thread has written and synced the copy; not a change, so no
        // idempotency key is recorded (a retry after a lost answer finds the file and gets 1).
        .forwarded(
            service + "BackupStore",
            Home_V1_BackupStoreRequest.self,
            Home_V1_BackupStoreResponse.self,
            role: .serverOwner,
            isMutation: false
        ) {
            api,
            call,
            request,
            caller throws(APIFailure) in
            let path = try backupPath(named: request.fileName, in: api.backupDirectory)
            try attempt(field: "file_name") { () throws(HomeServiceError) in
                try api.store.writeCopy(to: path, by: caller.account) { result in
                    switch result {
                    case .success(let size):
                        var response = Home_V1_BackupStoreResponse()
                        response.path = path
                        response.sizeBytes = UInt64(size)
                        call.respond(with: response)
                    case .failure(let error):
                        call.fail(APIFailure(error, field: "file_name").status)
                    }
                }
            }
        }
    ]

    /// The path of the backup `name` in `directory`. Only a plain file name is taken (not empty, at
    /// most 255 bytes, no '/', no NUL, not starting with '.'), so that the owner's token cannot have
    /// the server create files anywhere else on its machine (Redis's `CONFIG SET dir` taught that).
    static func backupPath(named name: String, in directory: String) throws(APIFailure) -> String {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= 255, bytes.first != UInt8(ascii: "."),
            !bytes.contains(UInt8(ascii: "/")), !bytes.contains(0)
        else {
            throw .invalid(
                "file_name",
                "a backup is named by a file name in the server's backup directory: not empty, at most 255 bytes, no '/', not starting with '.'"
            )
        }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
