// What HomeClient's API names, re-exported, so that `import HomeClient` alone is enough to name an
// `Endpoint` (UV), a `StatusCode` (Wire), a connection's `ClientConnection.Configuration`
// (RPCClient), the generated messages (HomeProto) and a `Logger` (swift-log), as swift-nio's `NIO` re-exports `NIOCore`.
@_exported public import HomeProto
@_exported public import Logging
@_exported public import RPCClient
@_exported public import UV
@_exported public import Wire
