/// Whoever a connection authenticated as: a user account, an accessory, or a test's fake. Handlers
/// receive it with every call and cast it to the type their authenticator produces.
public protocol Principal: AnyObject, Sendable {
    /// For logs: who this is, never a secret.
    var displayName: String { get }
}

/// Resolves a bearer token to a principal. Called on the loop thread, so it must answer from memory.
public protocol Authenticator: AnyObject {
    /// The principal `token` belongs to, or `nil` if the token is unknown or revoked.
    func principal(forToken token: String) -> (any Principal)?
}
