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
            let path = request.path
            try attempt(field: "path") { () throws(HomeServiceError) in
                try api.store.writeCopy(to: path, by: caller.account) { result in
                    switch result {
                    case .success(let size):
                        var response = Home_V1_BackupStoreResponse()
                        response.path = path
                        response.sizeBytes = UInt64(size)
                        call.respond(with: response)
                    case .failure(let error):
                        call.fail(APIFailure(error, field: "path").status)
                    }
                }
            }
        }
    ]
}
