public import HomeService
import RPCServer
import RPCServices
import SwiftProtobuf

/// Who may call a method: its `home.v1.access` option (``DeclaredMethod``); docs/API.md prints it, the
/// permission tests read it.
public enum RequiredRole: String, Sendable, CaseIterable {
    /// Any authenticated account.
    case anyAccount = "any account"
    /// A member of the home the request names: an administrator or a guest.
    case member = "member (guest or administrator)"
    /// An administrator of the home the request names.
    case administrator
    /// The server's owner account.
    case serverOwner = "server owner"
}

/// The caller of a method: the account, the token it authenticated with, and the connection's
/// session.
struct Caller {
    let principal: UserPrincipal
    var account: AccountID { principal.account }
    var token: AccessTokenID? { principal.token }
    var session: SessionID { principal.session }
    /// What the caller's token may do (``TokenLimits/unlimited`` for a client certificate).
    var limits: TokenLimits { principal.limits ?? .unlimited }
}

/// One method of the API: its name, request type, the role it needs, and how it is registered.
public struct APIMethod: Sendable {
    public let name: String
    /// The request message's full protobuf name, e.g. "home.v1.AddRoomRequest".
    public let requestType: String
    /// The response message's full protobuf name.
    public let responseType: String
    public let role: RequiredRole
    /// The least scope a token needs to call it (`home.v1.scope`).
    public let scope: TokenScope
    /// Whether a token limited to homes is refused it (`home.v1.every_home`).
    public let spansEveryHome: Bool
    /// Whether it changes anything (answered after its commit; accepts an idempotency key).
    public let isMutation: Bool
    /// Whether it answers with a stream of messages (of `responseType`) rather than one.
    public let isStreaming: Bool
    let register: @Sendable (HomeAPI, inout MethodRegistry) -> Void

    /// Sees a request's bytes before the generated decoder and may answer the call itself,
    /// returning whether it did: for a common request shape read without swift-protobuf.
    typealias Shortcut = @Sendable (HomeAPI, ServerCall, ArraySlice<UInt8>) -> Bool

    /// A method that reads from memory and answers at once.
    static func read<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ name: String,
        _ request: Request.Type,
        _ response: Response.Type,
        _ body: @escaping @Sendable (HomeAPI, Request, Caller) throws(APIFailure) -> Response
    ) -> APIMethod {
        encodedRead(name, request, response, encoding(body))
    }

    /// A method that only reads, whose answer `body` encodes itself (a whole home, ``HomeEncoder``).
    static func encodedRead<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ name: String,
        _ request: Request.Type,
        _ response: Response.Type,
        _ body: @escaping @Sendable (HomeAPI, Request, Caller) throws(APIFailure) -> [UInt8]
    ) -> APIMethod {
        unary(name, request, response, kind: .read) { api, call, request, _ in
            api.answerRead(call, request, body)
        }
    }

    /// A method that changes the store: answered once its commit is durable.
    static func mutation<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ name: String,
        _ request: Request.Type,
        _ response: Response.Type,
        _ body: @escaping @Sendable (HomeAPI, Request, Caller) throws(APIFailure) -> Response
    ) -> APIMethod {
        encodedMutation(name, request, response, encoding(body))
    }

    /// A method that changes the store, whose answer `body` encodes itself (``ActionSetEncoding``).
    ///
    /// `shortcut`, if given, sees each request's bytes first (``Shortcut``).
    static func encodedMutation<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ name: String,
        _ request: Request.Type,
        _ response: Response.Type,
        shortcut: Shortcut? = nil,
        _ body: @escaping @Sendable (HomeAPI, Request, Caller) throws(APIFailure) -> [UInt8]
    ) -> APIMethod {
        unary(name, request, response, kind: .mutation, shortcut: shortcut) { api, call, request, bytes in
            api.answerMutation(call, request, bytes, body)
        }
    }

    /// How a handler answers, which its declaration must agree with.
    private enum HandlerKind {
        /// Reads, answered at once: declared without `mutates`.
        case read
        /// Changes the store, answered once durable: declared `mutates`.
        case mutation
        /// Answered later (an accessory's answer): either.
        case forwarded
    }

    /// The declaration of `name` (proto/home/v1), checked against the handler's types and kind.
    private static func declaration<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ name: String,
        _: Request.Type,
        _: Response.Type,
        kind: HandlerKind,
        isStreaming: Bool
    ) -> DeclaredMethod {
        let declared = DeclaredMethod.named(name)
        precondition(
            declared.request == Request.protoMessageName && declared.response == Response.protoMessageName
                && declared.isStreaming == isStreaming,
            "\(name)'s handler does not take and answer the messages proto/home/v1 declares"
        )
        switch kind {
        case .read: precondition(!declared.mutates, "\(name) is declared mutates but answered as a read")
        case .mutation: precondition(declared.mutates, "\(name) is answered as a mutation but not declared mutates")
        case .forwarded: break
        }
        return declared
    }

    /// A unary method whose requests `answer` handles, after `shortcut` (if any) declined them.
    private static func unary<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ name: String,
        _ request: Request.Type,
        _ response: Response.Type,
        kind: HandlerKind,
        shortcut: Shortcut? = nil,
        _ answer: @escaping @Sendable (HomeAPI, ServerCall, Request, ArraySlice<UInt8>) -> Void
    ) -> APIMethod {
        let declared = declaration(name, request, response, kind: kind, isStreaming: false)
        return APIMethod(
            name: name,
            requestType: Request.protoMessageName,
            responseType: Response.protoMessageName,
            role: declared.role,
            scope: declared.dispatchRule.scope,
            spansEveryHome: declared.spansEveryHome,
            isMutation: declared.mutates,
            isStreaming: false
        ) { api, registry in
            // The declared access and the token's limits are checked first
            // (``HomeAPI/admits(_:_:requestBytes:)``), on the request's bytes, before the shortcut
            // or the decoder: a refused call is not decoded. Only the rule's enums are captured
            // (not the declaration, whose strings would be retained on every call), and not
            // through `shortcut.map`: a closure made inside a generic `map` is called through a
            // reabstraction thunk.
            let rule = declared.dispatchRule
            let bytesShortcut: (ServerCall, ArraySlice<UInt8>) -> Bool =
                if let shortcut {
                    { call, bytes in !api.admits(call, rule, requestBytes: bytes) || shortcut(api, call, bytes) }
                } else {
                    { call, bytes in !api.admits(call, rule, requestBytes: bytes) }
                }
            registry.registerUnary(name, request: Request.self, shortcut: bytesShortcut) { call, request, bytes in
                answer(api, call, request, bytes)
            }
        }
    }

    /// `body`, answering with its response's encoding.
    private static func encoding<Request, Response: SwiftProtobuf.Message>(
        _ body: @escaping @Sendable (HomeAPI, Request, Caller) throws(APIFailure) -> Response
    ) -> @Sendable (HomeAPI, Request, Caller) throws(APIFailure) -> [UInt8] {
        { api, request, caller throws(APIFailure) in
            let response = try body(api, request, caller)
            // A proto3 message has no required fields: encoding it cannot fail.
            return (try? response.encodedBytes()) ?? []
        }
    }

    /// A unary method whose answer waits for an accessory: `body` checks the request and forwards
    /// it, and the answer comes when the accessory's does (or at once when nothing need be asked).
    /// A forwarded change is answered once durable; it sets a value, so a retry is harmless and an
    /// idempotency key is not needed (it is accepted and not recorded).
    ///
    /// `shortcut`, if given, sees each request's bytes first (``Shortcut``).
    static func forwarded<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ name: String,
        _ request: Request.Type,
        _ response: Response.Type,
        shortcut: Shortcut? = nil,
        _ body: @escaping @Sendable (HomeAPI, ServerCall, Request, Caller) throws(APIFailure) -> Void
    ) -> APIMethod {
        unary(name, request, response, kind: .forwarded, shortcut: shortcut) {
            api,
            call,
            request,
            _ in
            api.answerLater(call, request, body)
        }
    }

    /// A server-streaming method: `body` checks the request and starts the stream, or throws.
    static func stream<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ name: String,
        _ request: Request.Type,
        _ response: Response.Type,
        _ body: @escaping @Sendable (HomeAPI, ServerCall, Request, Caller) throws(APIFailure) -> Void
    ) -> APIMethod {
        let declared = declaration(name, request, response, kind: .read, isStreaming: true)
        // A stream's handler checks its request (Subscribe names many homes); one that names its
        // home in field 1 would have to be checked at dispatch as a unary call is.
        precondition(declared.dispatchCheck == nil, "\(name): a stream is not checked at dispatch")
        return APIMethod(
            name: name,
            requestType: Request.protoMessageName,
            responseType: Response.protoMessageName,
            role: declared.role,
            scope: declared.dispatchRule.scope,
            spansEveryHome: declared.spansEveryHome,
            isMutation: false,
            isStreaming: true
        ) { api, registry in
            let rule = declared.dispatchRule
            registry.registerServerStreaming(name, request: Request.self) { call, request in
                guard api.admitsStream(call, rule) else { return }
                api.answerLater(call, request, body)
            }
        }
    }
}
