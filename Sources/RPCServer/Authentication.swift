import Wire

/// Whoever a connection authenticated as: a user account, an accessory, or a test's fake. Handlers
/// receive it with every call and cast it to the type their authenticator produces.
///
/// Not `Sendable`: a principal lives and dies with its connection on the loop thread, so it may keep
/// per-connection memos in plain stored properties (a lock or atomic there cost a cached read more
/// than the lookup the memo saves), and the compiler keeps it from leaving that thread.
public protocol Principal: AnyObject {
    /// For logs: who this is, never a secret.
    var displayName: String { get }
}

/// Resolves a bearer token to a principal. Called on the loop thread, so it must answer from memory.
public protocol Authenticator: AnyObject {
    /// The principal `token` belongs to, or `nil` if the token is unknown or revoked.
    func principal(forToken token: String) -> (any Principal)?
}

extension [MetadataEntry] {
    /// The token of an `authorization: Bearer <token>` entry: how a call authenticates its connection.
    var bearerToken: String? {
        guard let entry = first(where: { $0.key == "authorization" }) else { return nil }
        let value = String(decoding: entry.value, as: UTF8.self)
        guard value.hasPrefix("Bearer ") else { return nil }
        return String(value.dropFirst("Bearer ".count))
    }
}
