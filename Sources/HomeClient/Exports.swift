// What HomeClient's API names, re-exported, so that `import HomeClient` alone is enough to name an
// `Endpoint` (UV), a `StatusCode` (Wire), a connection's `ClientConnection.Configuration` and an
// `RPCError` (RPCClient), TLS's client context and its settings (TLS) and the generated messages
// (HomeProto), as
// swift-nio's `NIO` re-exports `NIOCore`. Only those declarations: the loop, the frames and the
// connection's machinery stay out of a service's namespace.
@_exported public import HomeProto

@_exported public import class RPCClient.ClientConnection
@_exported public import struct RPCClient.RPCError
@_exported public import enum TLS.ApplicationProtocol
@_exported public import struct TLS.TLSClientConfiguration
@_exported public import class TLS.TLSContext
@_exported public import struct TLS.TLSError
@_exported public import enum UV.Endpoint
@_exported public import struct Wire.StatusCode
