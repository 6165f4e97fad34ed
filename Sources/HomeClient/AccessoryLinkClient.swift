public import Foundation
public import HomeProto
public import RPCClient
import SwiftProtobuf
public import UV
import Wire

/// What an accessory's link stream carries: `advertised`, `paired`, `attached`, `command`, `unpaired`.
public typealias LinkMessage = Home_V1_LinkMessage
/// A request forwarded to the accessory; answer it with ``AccessoryLinkClient/answer(_:hapStatus:value:)``.
public typealias AccessoryCommand = Home_V1_Command
/// One event of the accessory browser: an accessory `found`, or `removed`.
public typealias BrowseEvent = Home_V1_BrowseEvent

/// The accessory's side of HomeRPC (`home.v1.AccessoryLink`), for adapters of real devices and for
/// simulators: advertise an unpaired accessory, or attach a paired one with its credential, then
/// take commands from the link stream, answer them, and report the accessory's own changes.
///
/// ```swift
/// let link = try await AccessoryLinkClient.connect(to: .tcp(host: "127.0.0.1", port: 7420))
/// for try await message in try link.advertise(description, setupCode: "031-45-154") {
///     switch message.kind {
///     case .paired(let paired)?: save(paired.credential)   // shown only once
///     case .command(let command)?: try await link.answer(command.commandID)   // 0: done
///     default: break
///     }
/// }
/// ```
///
/// Everything goes over one connection: answers and reports count only on the connection that
/// holds the accessory's link. When the connection drops, the stream ends with UNAVAILABLE and the
/// accessory is unreachable until it attaches again (on a new client). So does a connection that
/// has used every stream id (2^32 − 1 calls: ids never repeat on a connection), which this client
/// closes as its next answer or report fails: the accessory attaches again on a new client.
public final class AccessoryLinkClient: Sendable {
    private let rpc: RPCClient
    /// Each unary call's deadline.
    public let timeout: Duration?

    private init(rpc: RPCClient, timeout: Duration?) {
        self.rpc = rpc
        self.timeout = timeout
    }

    /// Connects to homed's accessory face.
    /// - Parameters:
    ///   - endpoint: where homed listens.
    ///   - timeout: each unary call's deadline (`nil`: none).
    ///   - connection: the connection's settings. Its `initialStreamCredit` is how many commands the
    ///     server may send on the link before the accessory has read any (the protocol's default, 64):
    ///     a bridge that takes many commands at once can announce more, so that none wait in the
    ///     server for credit.
    public static func connect(
        to endpoint: Endpoint,
        timeout: Duration? = .seconds(30),
        connection: ClientConnection.Configuration = ClientConnection.Configuration()
    ) async throws(HomeClientError) -> AccessoryLinkClient {
        do {
            return AccessoryLinkClient(
                rpc: try await RPCClient.connect(to: endpoint, configuration: connection),
                timeout: timeout
            )
        } catch {
            throw HomeClientError(error)
        }
    }

    private static let service = "home.v1.AccessoryLink/"

    /// Offers the unpaired accessory to the browser while the stream is iterated: `advertised`
    /// (ids filled in) first, `paired` with the credential once a controller adds it, then commands.
    public func advertise(
        _ description: AccessoryDescription,
        setupCode: String
    ) throws(HomeClientError)
        -> MessageStream<LinkMessage>
    {
        var request = Home_V1_AdvertiseRequest()
        request.accessory = description
        request.setupCode = setupCode
        return MessageStream(
            stream: rpc.serverStream(Self.service + "Advertise", request: try ProtoCall.encode(request))
        )
    }

    /// Reconnects a paired accessory: `attached` first, then commands. Fails with UNAUTHENTICATED
    /// when the credential is not (or no longer) valid: advertise again then. A bridge names the
    /// accessories it serves now; others than it was paired with get it blocked (61) until an
    /// administrator unblocks it.
    public func attach(
        _ accessory: UUID,
        credential: String,
        bridging bridged: [UUID] = []
    ) throws(HomeClientError) -> MessageStream<LinkMessage> {
        var request = Home_V1_AttachRequest()
        request.accessoryID = accessory.data
        request.credential = credential
        request.bridgedAccessoryIds = bridged.map(\.data)
        return MessageStream(stream: rpc.serverStream(Self.service + "Attach", request: try ProtoCall.encode(request)))
    }

    /// ``advertise(_:setupCode:)`` with callbacks on the connection's loop thread instead of a
    /// sequence: `onMessage` for each message, `onEnd` once (`nil` when the server ended the link with
    /// OK). For an accessory that answers each command at once: no task and no thread hop per command.
    /// - Returns: the link's call; cancel it to close the link.
    public func advertise(
        _ description: AccessoryDescription,
        setupCode: String,
        onMessage: @escaping @Sendable (LinkMessage) -> Void,
        onEnd: @escaping @Sendable (HomeClientError?) -> Void
    ) throws(HomeClientError) -> LinkCall {
        var request = Home_V1_AdvertiseRequest()
        request.accessory = description
        request.setupCode = setupCode
        return openLink("Advertise", try ProtoCall.encode(request), onMessage, onEnd)
    }

    /// ``attach(_:credential:bridging:)`` with callbacks, as
    /// ``advertise(_:setupCode:onMessage:onEnd:)`` has them.
    public func attach(
        _ accessory: UUID,
        credential: String,
        bridging bridged: [UUID] = [],
        onMessage: @escaping @Sendable (LinkMessage) -> Void,
        onEnd: @escaping @Sendable (HomeClientError?) -> Void
    ) throws(HomeClientError) -> LinkCall {
        var request = Home_V1_AttachRequest()
        request.accessoryID = accessory.data
        request.credential = credential
        request.bridgedAccessoryIds = bridged.map(\.data)
        return openLink("Attach", try ProtoCall.encode(request), onMessage, onEnd)
    }

    /// Opens a link stream with callbacks. A message that does not decode ends the link with that
    /// failure (the accessory cannot tell what it was asked) and cancels the call.
    private func openLink(
        _ method: String,
        _ request: [UInt8],
        _ onMessage: @escaping @Sendable (LinkMessage) -> Void,
        _ onEnd: @escaping @Sendable (HomeClientError?) -> Void
    ) -> LinkCall {
        let link = LinkCallbacks(onEnd: onEnd)
        let call = rpc.serverStream(
            Self.service + method,
            request: request,
            onMessage: { bytes in
                guard !link.hasEnded else { return }
                do {
                    // Commands by hand: the generated decoder was most of an accessory's work.
                    onMessage(try LinkMessage(linkBytes: bytes))
                } catch {
                    link.end(HomeClientError(status: .internal, message: "cannot decode home.v1.LinkMessage: \(error)"))
                    link.call?.cancel()
                }
            },
            onEnd: { error in link.end(error.map(HomeClientError.init)) }
        )
        link.call = call
        return LinkCall(call: call)
    }

    /// Answers a command: `hapStatus` 0 for done, else a HAP status (-70401...-70412); a read's
    /// answer carries the value.
    public func answer(
        _ command: UInt64,
        hapStatus: Int32 = 0,
        value: CharacteristicValue? = nil
    )
        async throws(HomeClientError)
    {
        _ = try await call(
            "AnswerCommand",
            Self.answerRequest(command, hapStatus, value),
            Home_V1_AnswerCommandResponse.self
        )
    }

    /// ``answer(_:hapStatus:value:)`` without waiting for the server's acknowledgement: the answer is
    /// on its way when this returns, and a failure (the link gone, the command timed out) is dropped,
    /// as the accessory could do nothing about it. For an accessory answering many commands at
    /// once: no task per answer.
    public func answerWithoutWaiting(_ command: UInt64, hapStatus: Int32 = 0, value: CharacteristicValue? = nil) {
        let request: [UInt8]
        if let value {
            guard let encoded = try? ProtoCall.encode(Self.answerRequest(command, hapStatus, value)) else { return }
            request = encoded
        } else {
            request = Home_V1_AnswerCommandRequest.bytes(commandID: command, hapStatus: hapStatus)
        }
        rpc.unary(Self.service + "AnswerCommand", request: request, timeout: timeout) { [rpc] result in
            if case .failure(.streamIDsExhausted) = result { Self.endLink(of: rpc) }
        }
    }

    /// The link's connection can carry no more answers or reports: closing it ends the link with
    /// UNAVAILABLE, which tells the accessory to attach again.
    private static func endLink(of rpc: RPCClient) {
        Task { await rpc.close() }
    }

    private static func answerRequest(
        _ command: UInt64,
        _ hapStatus: Int32,
        _ value: CharacteristicValue?
    ) -> Home_V1_AnswerCommandRequest {
        var request = Home_V1_AnswerCommandRequest()
        request.commandID = command
        request.hapStatus = hapStatus
        if let value { request.value = value }
        return request
    }

    /// Reports values the accessory changed on its own, applied together once durable.
    public func report(_ values: [(characteristic: UUID, value: CharacteristicValue)]) async throws(HomeClientError) {
        var request = Home_V1_ReportValuesRequest()
        request.reports = values.map { report in
            var message = Home_V1_ValueReport()
            message.characteristicID = report.characteristic.data
            message.value = report.value
            return message
        }
        _ = try await call("ReportValues", request, Home_V1_ReportValuesResponse.self)
    }

    /// Reports the firmware version the accessory (or one behind its bridge) runs now.
    public func reportFirmwareVersion(_ version: String, of accessory: UUID) async throws(HomeClientError) {
        var request = Home_V1_ReportFirmwareVersionRequest()
        request.accessoryID = accessory.data
        request.firmwareVersion = version
        _ = try await call("ReportFirmwareVersion", request, Home_V1_ReportFirmwareVersionResponse.self)
    }

    /// Closes the connection: the accessory becomes unreachable.
    public func close() async {
        await rpc.close()
    }

    private func call<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: String,
        _ request: Request,
        _ response: Response.Type
    ) async throws(HomeClientError) -> Response {
        do {
            return try await ProtoCall.unary(
                rpc,
                Self.service + method,
                request,
                returning: Response.self,
                timeout: timeout,
                metadata: []
            )
        } catch {
            if error.usedUpStreamIDs { Self.endLink(of: rpc) }
            throw error
        }
    }
}

extension HomeClient {
    /// HomeKit's accessory browser: a `found` for every accessory advertised now, then `found` and
    /// `removed` as they come and go, while the stream is iterated.
    public func browseAccessories() async throws(HomeClientError) -> MessageStream<BrowseEvent> {
        MessageStream(
            stream: try await openStream(homeService + "BrowseAccessories", Home_V1_BrowseAccessoriesRequest())
        )
    }
}

/// A link opened with callbacks (``AccessoryLinkClient/advertise(_:setupCode:onMessage:onEnd:)``).
public struct LinkCall: Sendable {
    let call: StreamingCall

    /// Closes the link: the accessory becomes unreachable (or leaves the browser), and `onEnd` runs
    /// with CANCELLED unless the link had ended.
    public func cancel() {
        call.cancel()
    }
}

/// The state a callback link stream keeps on its connection's loop thread: the call (to cancel it
/// after a message that does not decode) and whether `onEnd` ran, so that it runs once.
private final class LinkCallbacks: @unchecked Sendable {
    private let onEnd: @Sendable (HomeClientError?) -> Void
    /// Set right after the call starts; read on the loop thread, which starts it after that.
    var call: StreamingCall?
    private(set) var hasEnded = false

    init(onEnd: @escaping @Sendable (HomeClientError?) -> Void) {
        self.onEnd = onEnd
    }

    func end(_ error: HomeClientError?) {
        guard !hasEnded else { return }
        hasEnded = true
        onEnd(error)
    }
}
