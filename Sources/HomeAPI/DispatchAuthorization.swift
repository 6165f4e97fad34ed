import HomeService
public import RPCServer

/// The first line of authorization: the access proto/home/v1 declares for each method
/// (``DeclaredMethod``) and the limits of the caller's token (its scope, homes and expiry), checked
/// when the call arrives, before its handler (or its shortcut) runs. The store checks again as it
/// acts (the second line), with the operation's own rules.
///
/// A member or administrator method's home is the request's `home_id` (field 1: the generator
/// records which requests have it); a request whose `home_id` is absent or malformed goes on to the
/// handler, which names the field at fault. A caller without a live token goes on too, and the
/// handler refuses it as UNAUTHENTICATED.
extension HomeAPI {
    /// Whether `call` may go on to its handler; `false` after failing it.
    func admits(_ call: ServerCall, _ rule: DeclaredMethod.DispatchRule, requestBytes: ArraySlice<UInt8>) -> Bool {
        guard let principal = call.principal as? UserPrincipal, principal.hasLiveToken(in: store) else { return true }
        principal.noteUse(in: store, at: call.startedAt)
        if let refusal = refusal(of: call, by: principal, rule, requestBytes: requestBytes) {
            call.fail(refusal.status)
            return false
        }
        return true
    }

    /// Whether a call of a method the server serves beside this API (`ServerInfo/Get`) may be
    /// answered: its caller's token live and its limits allowing the method; `false` after failing it.
    public func admitsServerCall(_ call: ServerCall) -> Bool {
        guard caller(of: call) != nil else { return false }
        return admits(call, DeclaredMethod.named(call.method).dispatchRule, requestBytes: [])
    }

    /// Whether a stream's call may start: its token's scope and homes (a stream names no home in
    /// field 1: Subscribe's handler checks each home it names).
    func admitsStream(_ call: ServerCall, _ rule: DeclaredMethod.DispatchRule) -> Bool {
        admits(call, rule, requestBytes: [])
    }

    private func refusal(
        of call: ServerCall,
        by principal: UserPrincipal,
        _ rule: DeclaredMethod.DispatchRule,
        requestBytes: ArraySlice<UInt8>
    ) -> APIFailure? {
        switch rule.check {
        case nil:
            break
        case .serverOwner:
            guard store.isOwner(principal.account) else {
                return APIFailure(
                    HomeServiceError(.insufficientPrivileges, "only the server's owner may call \(call.method)")
                )
            }
        case .memberOfNamedHome, .administratorOfNamedHome:
            guard let home = RequestBytes.homeID(in: requestBytes) else { return nil }
            // A home outside the token's homes is answered as one the account cannot see.
            guard principal.mayActIn(home), let role = principal.role(in: home, from: store) else {
                return APIFailure(AccessRules.noSuchHome, object: home.raw, field: "home_id")
            }
            if role == .guest && rule.check == .administratorOfNamedHome {
                let refusal = HomeServiceError(
                    .insufficientPrivileges,
                    "\(call.method) in home \"\(store.name(of: home))\" needs an administrator; you are a guest"
                )
                return APIFailure(refusal, object: home.raw)
            }
        }
        guard let limits = principal.limits else { return nil }
        if rule.scope > limits.scope {
            return APIFailure(
                HomeServiceError(
                    .insufficientPrivileges,
                    "this token's scope is \(limits.scope.name): \(call.method) needs \(rule.scope.name)"
                )
            )
        }
        if rule.spansEveryHome, let homes = limits.homes {
            return APIFailure(
                HomeServiceError(
                    .insufficientPrivileges,
                    "this token is limited to \(homes.count) home\(homes.count == 1 ? "" : "s"): \(call.method) acts beyond them"
                )
            )
        }
        return nil
    }
}
