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
            Home_V1_BackupStoreResponse.self
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
    /// most 255 bytes, no '/', not starting with '.'), so that the owner's token cannot have the
    /// server create files anywhere else on its machine (Redis's `CONFIG SET dir` taught that); and
    /// only a name that prints as what it is (no control or invisible formatting characters, no
    /// space at either end), so that no log line or listing shows a name other than the file's.
    static func backupPath(named name: String, in directory: String) throws(APIFailure) -> String {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= 255, bytes.first != UInt8(ascii: "."),
            !bytes.contains(UInt8(ascii: "/"))
        else {
            throw .invalid(
                "file_name",
                "a backup is named by a file name in the server's backup directory: not empty, at most 255 bytes, no '/', not starting with '.'"
            )
        }
        if let hidden = name.unicodeScalars.first(where: isHidden) {
            throw .invalid(
                "file_name",
                "a backup's file name may not contain \(describe(hidden)), which does not print"
            )
        }
        if let first = name.unicodeScalars.first, let last = name.unicodeScalars.last,
            first.properties.isWhitespace || last.properties.isWhitespace
        {
            throw .invalid("file_name", "a backup's file name may not start or end with a space")
        }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Characters a terminal does not show as themselves: controls (NUL, newline, ESC), formatting
    /// (an RTL override, a zero-width joiner), line and paragraph separators, and code points with
    /// no character.
    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: true
        default: false
        }
    }

    private static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
