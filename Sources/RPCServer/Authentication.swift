import TLS
import UV
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
    /// The principal `token` belongs to, or `nil` if the token is not accepted.
    func principal(forToken token: String) -> (any Principal)?
    /// Why `token` was not accepted, for the client: told apart from a missing token, and saying
    /// nothing a guesser could use (``RPCServer/tokenRefusedMessage`` unless the authenticator knows
    /// better, e.g. that the token expired).
    func refusal(forToken token: String) -> String
    /// The principal a verified client certificate (mutual TLS) with this subject stands for, or
    /// `nil`: a connection that sends no token authenticates with it.
    func principal(forClientCertificate subject: String) -> (any Principal)?
}

extension Authenticator {
    public func refusal(forToken token: String) -> String { RPCServer.tokenRefusedMessage }

    /// No certificate stands for anyone.
    public func principal(forClientCertificate subject: String) -> (any Principal)? { nil }
}

extension [MetadataEntry] {
    /// The token of an `authorization: Bearer <token>` entry: how a call authenticates its connection.
    var bearerToken: String? {
        guard let entry = first(where: { $0.key == "authorization" }) else { return nil }
        let value = String(decoding: entry.value, as: UTF8.self)
        guard value.hasPrefix("Bearer "), value.utf8.count > "Bearer ".utf8.count else { return nil }
        return String(value.dropFirst("Bearer ".count))
    }
}

extension RPCServer {
    /// A call without a token, before the connection authenticated.
    public static let noTokenMessage = "authenticate first: send authorization: Bearer <token>"
    /// A token the authenticator does not accept. It says neither whether the token was ever issued
    /// nor to whom, so that it tells a guesser nothing.
    public static let tokenRefusedMessage = "the bearer token was not accepted: it is unknown or was revoked"

    /// Who a call on `connection` is: its token's principal or, without a token, its verified
    /// client certificate's (mutual TLS); or the status refusing it.
    func authenticate(token: String?, on connection: Connection) -> Admission<any Principal> {
        guard let token else {
            if let subject = (connection.security as? TLSSession)?.peerSubject,
                let principal = authenticator?.principal(forClientCertificate: subject)
            {
                return .accepted(principal)
            }
            return .refused(CallStatus(code: .unauthenticated, message: Self.noTokenMessage))
        }
        guard let principal = authenticator?.principal(forToken: token) else {
            let message = authenticator?.refusal(forToken: token) ?? Self.tokenRefusedMessage
            return .refused(CallStatus(code: .unauthenticated, message: message))
        }
        return .accepted(principal)
    }
}
