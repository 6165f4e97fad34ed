import HomeService

/// A method as proto/home/v1 declares it: what its `home.v1.access`, `home.v1.mutates`,
/// `home.v1.scope` and `home.v1.every_home` options say, and its message types. The table (``byName``) is generated from the IDL
/// (scripts/generate-methods.py); the server's methods take their role and kind from it, so a
/// method's rights are written once, in the .proto.
struct DeclaredMethod: Sendable {
    /// `home.v1.Access`, without UNSPECIFIED (the generator refuses a method that names none).
    enum Access: Sendable {
        case anyone
        case accessory
        case anyAccount
        case member
        case administrator
        case serverOwner
    }

    let access: Access
    let mutates: Bool
    let isStreaming: Bool
    /// Whether the request's field 1 is `bytes home_id`, the home a member or administrator method
    /// acts in (every such method's but Subscribe's, which names many).
    let namesHomeInFieldOne: Bool
    /// The least scope a token needs to call it; `nil` for the methods no account calls.
    let scope: TokenScope?
    /// Whether it acts beyond any one home (adds one, copies the store): a token limited to homes
    /// may not call it.
    let spansEveryHome: Bool
    /// The request and response messages' full protobuf names.
    let request: String
    let response: String

    /// The declaration of `name`, which must be declared: a handler for a method the IDL does not
    /// have is a programmer error, found when the server registers its methods.
    static func named(_ name: String) -> DeclaredMethod {
        guard let declared = byName[name] else { preconditionFailure("\(name) is not declared in proto/home/v1") }
        return declared
    }

    /// What is checked when a call arrives, before its handler runs (``HomeAPI/admits(_:_:requestBytes:)``):
    /// the owner's methods, and member or administrator methods that name their home in field 1.
    enum DispatchCheck: Sendable {
        case serverOwner
        case memberOfNamedHome
        case administratorOfNamedHome
    }

    /// Everything checked when a call arrives: the access, and the token's limits.
    struct DispatchRule: Sendable {
        let check: DispatchCheck?
        let scope: TokenScope
        let spansEveryHome: Bool
    }

    var dispatchRule: DispatchRule {
        guard let scope else { preconditionFailure("an account method is declared without a token scope") }
        return DispatchRule(check: dispatchCheck, scope: scope, spansEveryHome: spansEveryHome)
    }

    var dispatchCheck: DispatchCheck? {
        switch access {
        case .serverOwner: .serverOwner
        case .member: namesHomeInFieldOne ? .memberOfNamedHome : nil
        case .administrator: namesHomeInFieldOne ? .administratorOfNamedHome : nil
        case .anyone, .accessory, .anyAccount: nil
        }
    }

    /// The role an account needs: the API's methods are all called by accounts.
    var role: RequiredRole {
        switch access {
        case .anyAccount: .anyAccount
        case .member: .member
        case .administrator: .administrator
        case .serverOwner: .serverOwner
        case .anyone, .accessory: preconditionFailure("an account method is declared for \(access)")
        }
    }
}
