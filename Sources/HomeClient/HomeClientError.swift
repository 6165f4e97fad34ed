public import Foundation
public import HomeProto
public import RPCClient
import SwiftProtobuf
public import Wire

/// Why a call failed: the status, and for a domain failure the HomeKit code with the object and
/// request field it concerns.
public struct HomeClientError: Error, Sendable, CustomStringConvertible {
    /// The call's status code (docs/API.md maps HomeKit codes to them).
    public var status: StatusCode
    /// The server's explanation, or the client's for a transport failure.
    public var message: String
    /// HomeKit's HMErrorCode number (e.g. 17 InsufficientPrivileges); `nil` for protocol or
    /// transport failures.
    public var homeKitCode: Int32?
    /// HomeKit's name for the code, e.g. "InsufficientPrivileges".
    public var homeKitName: String?
    /// The object the failure concerns, when the server named one.
    public var objectID: UUID?
    /// The request field that carried the bad input, e.g. "name".
    public var field: String?
    /// Per-item results of a call on many objects (an action set's writes).
    public var itemResults: [Home_V1_ItemResult]
    /// Whether the call had no effect and may be retried as is.
    public var isRetryable: Bool
    /// Whether the request may have reached the server. `false` when it provably did not: no
    /// connection could be made, or its connection had already closed or had no stream id left
    /// (then ``isRetryable`` is `true`: sending it again, whatever it is, cannot apply it twice).
    public var wasSent: Bool { !wasNotSent }
    /// The connection's TLS failed: the server's certificate is not trusted (or not for this
    /// name), it refused ours, or it does not speak HomeRPC over TLS. Connecting again fails the same
    /// way; ``message`` says why.
    public var isSecurityFailure = false
    /// The call never left: no connection could be made, its connection had already closed, or it
    /// had no stream id left for it.
    var wasNotSent = false
    /// The call never left because its connection had used every stream id.
    var usedUpStreamIDs = false

    /// The failure an RPC error reports, with the HomeKit code, object and field of its details.
    public init(_ error: RPCError) {
        status = error.code
        message = error.message
        isRetryable = error.isRetryable
        isSecurityFailure = error.isSecurityFailure
        usedUpStreamIDs = error == .streamIDsExhausted
        wasNotSent = error == .clientClosed || usedUpStreamIDs
        itemResults = []
        guard !error.details.isEmpty, let details = try? Home_V1_ErrorDetails(serializedBytes: error.details) else {
            return
        }
        homeKitCode = details.homekitCode
        homeKitName = details.homekitName.isEmpty ? nil : details.homekitName
        objectID = details.objectID.count == 16 ? UUID(data: details.objectID) : nil
        field = details.field.isEmpty ? nil : details.field
        itemResults = details.itemResults
    }

    init(status: StatusCode, message: String) {
        self.status = status
        self.message = message
        itemResults = []
        isRetryable = false
    }

    public var description: String {
        var text = "\(status.name): \(message)"
        if let homeKitCode { text += " [HomeKit \(homeKitCode) \(homeKitName ?? "")]" }
        if let field { text += " (field \(field))" }
        return text
    }
}

extension UUID {
    /// The 16 bytes the protocol carries.
    public var data: Data {
        withUnsafeBytes(of: uuid) { Data($0) }
    }

    /// The identifier in 16 bytes, or `nil` for any other length.
    public init?(data: Data) {
        guard data.count == 16 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { $0.copyBytes(from: data) }
        self.init(uuid: bytes)
    }
}

extension Data {
    /// The 16-byte identifier these bytes hold, as every id the server sends is. Any other length
    /// is a programming error and stops the program, as an index out of range does: a made-up
    /// all-zero id would name nothing, or the wrong thing, far from the mistake. ``UUID/init(data:)``
    /// checks instead.
    public var uuid: UUID {
        guard let id = UUID(data: self) else { preconditionFailure("an id is 16 bytes, not \(count)") }
        return id
    }
}
