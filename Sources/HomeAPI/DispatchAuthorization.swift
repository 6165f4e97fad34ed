import HomeService
import RPCServer
import Wire

/// The first line of authorization: the access proto/home/v1 declares for each method
/// (``DeclaredMethod``), checked when the call arrives, before its handler (or its shortcut) runs.
/// The store checks again as it acts (the second line), with the operation's own rules.
///
/// A member or administrator method's home is the request's `home_id` (field 1: the generator
/// records which requests have it); a request whose `home_id` is absent or malformed goes on to the
/// handler, which names the field at fault. A caller without a live token goes on too, and the
/// handler refuses it as UNAUTHENTICATED.
extension HomeAPI {
    /// Whether `call` may go on to its handler; `false` after failing it.
    func admits(_ call: ServerCall, as declared: DeclaredMethod, requestBytes: ArraySlice<UInt8>) -> Bool {
        switch declared.access {
        case .anyone, .accessory, .anyAccount:
            return true
        case .serverOwner:
            guard let principal = call.principal as? UserPrincipal, !store.isOwner(principal.account) else {
                return true
            }
            let refusal = HomeServiceError(.insufficientPrivileges, "only the server's owner may call \(call.method)")
            call.fail(APIFailure(refusal).status)
            return false
        case .member, .administrator:
            guard declared.namesHomeInFieldOne, let principal = call.principal as? UserPrincipal,
                let home = RequestBytes.homeID(in: requestBytes)
            else { return true }
            switch store.role(of: principal.account, in: home) {
            case nil:
                call.fail(APIFailure(AccessRules.noSuchHome, object: home.raw, field: "home_id").status)
                return false
            case .guest where declared.access == .administrator:
                let refusal = HomeServiceError(
                    .insufficientPrivileges,
                    "\(call.method) in home \"\(store.name(of: home))\" needs an administrator; you are a guest"
                )
                call.fail(APIFailure(refusal, object: home.raw).status)
                return false
            default:
                return true
            }
        }
    }
}
