import HomeService
import RPCServer

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
    func admits(_ call: ServerCall, _ check: DeclaredMethod.DispatchCheck, requestBytes: ArraySlice<UInt8>) -> Bool {
        guard let principal = call.principal as? UserPrincipal, principal.hasLiveToken(in: store) else { return true }
        switch check {
        case .serverOwner:
            guard !store.isOwner(principal.account) else { return true }
            call.fail(
                APIFailure(HomeServiceError(.insufficientPrivileges, "only the server's owner may call \(call.method)"))
                    .status
            )
            return false
        case .memberOfNamedHome, .administratorOfNamedHome:
            guard let home = RequestBytes.homeID(in: requestBytes) else { return true }
            switch principal.role(in: home, from: store) {
            case nil:
                call.fail(APIFailure(AccessRules.noSuchHome, object: home.raw, field: "home_id").status)
                return false
            case .guest where check == .administratorOfNamedHome:
                let refusal = HomeServiceError(
                    .insufficientPrivileges,
                    "\(call.method) in home \"\(store.name(of: home))\" needs an administrator; you are a guest"
                )
                call.fail(APIFailure(refusal, object: home.raw).status)
                return false
            case .guest, .administrator:
                return true
            }
        }
    }
}
