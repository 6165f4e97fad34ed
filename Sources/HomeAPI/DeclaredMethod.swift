/// A method as proto/home/v1 declares it: what its `home.v1.access` and `home.v1.mutates` options
/// say, and its message types. The table (``byName``) is generated from the IDL
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
    /// The request and response messages' full protobuf names.
    let request: String
    let response: String

    /// The declaration of `name`, which must be declared: a handler for a method the IDL does not
    /// have is a programmer error, found when the server registers its methods.
    static func named(_ name: String) -> DeclaredMethod {
        guard let declared = byName[name] else { preconditionFailure("\(name) is not declared in proto/home/v1") }
        return declared
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
