import Foundation
public import HomeProto
public import HomeService
public import RPCServer
public import RPCServices
import SwiftProtobuf
public import UV
public import Wire

/// The controller face of HomeKit over RPC: `home.v1.HomeService` and `home.v1.AccountService`,
/// bound to one store. Runs on the store's loop thread.
///
/// Reads answer from memory once what they show is durable (at once when nothing is pending). A
/// mutation runs in one write scope of the store and answers only when its commit ticket completes;
/// with an `idempotency-key` metadata entry, its outcome is remembered in the same commit, and a
/// retry with the same key (same account, same request, within 24 hours) gets that outcome again
/// without changing anything.
public final class HomeAPI {
    let store: HomeStore
    /// The open change streams; the store's change observer feeds them.
    private(set) var subscriptions: SubscriptionHub!
    /// The accessories' side: advertisements, links, forwarded commands.
    let links: AccessoryLinks
    /// Which client certificates stand for whom (mutual TLS): homed fills it from
    /// `--tls-client-identities` and replaces it on SIGHUP.
    public let identities = ClientIdentities()
    /// Fires the timer triggers.
    private(set) var scheduler: TriggerScheduler!
    /// Expires tokens and records their use.
    private(set) var tokenUpkeep: TokenUpkeep!
    /// The answers waiting for their commits.
    private let commitAnswers: CommitAnswers
    /// The absolute directory `BackupStore` writes into (``AdminMethods``).
    let backupDirectory: String
    /// Arrays of written answers, to encode a store write's answer into.
    private let answerBuffers = AnswerBuffers()

    /// An empty array to encode a durable write's answer into (see ``AnswerBuffers``).
    func takeAnswerBuffer() -> [UInt8] { answerBuffers.take() }

    /// The metadata key a client sends to make a mutation safe to retry.
    public static let idempotencyKeyMetadata = "idempotency-key"
    /// Accessories recorded unreachable per commit at start-up.
    static let unreachableBatch = 2_000
    /// Batches of that record in flight at once: one at a time left the writer idle between them
    /// (100,000 took over 2 s); a few keep it busy at a few megabytes.
    static let unreachableBatchesInFlight = 4

    /// Marks every stored accessory unreachable until its link attaches (a new process has none).
    /// - Parameters:
    ///   - loop: the store's loop, for the accessory commands' deadlines.
    ///   - maxPendingEventsPerSubscription: how many layout events may wait for one subscriber
    ///     before it is resynchronised instead (docs/API.md, "Slow subscribers").
    ///   - maxUnreadBytesPerConnection: how many bytes one connection's subscriptions may hold
    ///     unread (home states as encoded, about 80 an event); the stream that passes it ends.
    ///   - maxUnreadBytesInAll: the same for every connection's subscriptions together (homed
    ///     gives it the server's budget for buffered bytes).
    ///   - accessories: the accessory face's timeouts and bounds.
    ///   - backupDirectory: the absolute directory backups are written into, by file name only.
    public init(
        store: HomeStore,
        loop: EventLoop,
        maxPendingEventsPerSubscription: Int = 4096,
        maxUnreadBytesPerConnection: Int = 16 << 20,
        maxUnreadBytesInAll: Int = 1 << 30,
        accessories: AccessoryLinkConfiguration = AccessoryLinkConfiguration(),
        backupDirectory: String
    ) {
        self.store = store
        self.backupDirectory = backupDirectory
        commitAnswers = CommitAnswers(store: store, buffers: answerBuffers)
        let links = AccessoryLinks(store: store, loop: loop, configuration: accessories)
        self.links = links
        let hub = SubscriptionHub(
            api: self,
            maxPendingLayoutEvents: maxPendingEventsPerSubscription,
            maxHeldBytes: (perConnection: maxUnreadBytesPerConnection, inAll: maxUnreadBytesInAll)
        )
        subscriptions = hub
        let scheduler = TriggerScheduler(api: self, loop: loop)
        self.scheduler = scheduler
        tokenUpkeep = TokenUpkeep(api: self, loop: loop)
        store.changeObserver = { [unowned hub, unowned links, unowned scheduler] change in
            hub.publish(change)
            switch change.event.kind {
            case .accessoryRemoved, .homeRemoved:
                // A removal that took accessories with it ends their links once it is durable.
                links.dropRemovedAccessories()
                if change.event.kind == .homeRemoved { scheduler.reschedule() }
            case .triggerAdded, .triggerUpdated, .triggerRemoved, .homeTimeZoneUpdated:
                scheduler.reschedule()
            default:
                break
            }
        }
        // No accessory is connected yet: every one is unreachable until it attaches. Reads see it
        // at once; the rows and events follow, a batch per commit, while the server serves.
        store.markEveryAccessoryUnreachable()
        for _ in 0..<Self.unreachableBatchesInFlight { recordStartUpUnreachability() }
        scheduler.start()
        tokenUpkeep.start()
    }

    /// Records a batch of the start-up's unreachable accessories and, once it is committed, the
    /// next: a bounded number in flight keeps the memory small and leaves the writer room for the
    /// clients' changes in between.
    private func recordStartUpUnreachability() {
        let (result, ticket) = store.write { () throws(HomeServiceError) in
            try store.recordStartUpUnreachability(limit: Self.unreachableBatch)
        }
        guard case .success(let remaining) = result, remaining > 0 else { return }
        store.whenCommitted(ticket) { [weak self] failure in
            if failure == nil { self?.recordStartUpUnreachability() }
        }
    }

    /// Ends every change stream, accessory link and browser with `status`: call it when a drain
    /// begins, so that subscribers and accessories reconnect (and resume) instead of holding the
    /// drain open.
    public func endStreams(_ status: CallStatus) {
        subscriptions.endAll(status)
        links.endAll(status)
        scheduler.close()
        tokenUpkeep.close()
    }

    /// Every controller method, in the order docs/API.md lists them.
    public static var methods: [APIMethod] {
        HomeMethods.all + [SubscribeMethod.method, AccessoryLinkMethods.browse] + AccountMethods.all + AdminMethods.all
    }

    /// The accessory face's methods: they take no bearer token (docs/API.md, "Accessories").
    public static var accessoryMethods: [String] { AccessoryLinkMethods.names }

    /// The message a failed call's status details hold (the gRPC door names it in
    /// `grpc-status-details-bin`).
    public static let statusDetailsType = Home_V1_ErrorDetails.protoMessageName

    /// Registers every method; the registry's handlers keep this object alive.
    public func register(in registry: inout MethodRegistry) {
        for method in Self.methods { method.register(self, &registry) }
        AccessoryLinkMethods.register(self, in: &registry)
    }

    /// Adds the change streams' and the accessories' metrics to a scrape (docs/OPERATIONS.md,
    /// "Metrics").
    public func addMetrics(to out: inout PrometheusText) {
        out.gauge("homed_subscriptions_open", "Open change streams (Subscribe).", UInt64(subscriptions.openCount))
        out.gauge(
            "homed_subscription_held_bytes",
            "Bytes change streams hold for subscribers that have not read them.",
            UInt64(max(0, subscriptions.heldBytes))
        )
        out.counter("homed_events_delivered_total", "Messages sent on change streams.", subscriptions.eventsDelivered)
        out.counter(
            "homed_events_skipped_total",
            "Value changes slow subscribers never saw, coalesced into a later value.",
            subscriptions.eventsSkipped
        )
        out.counter(
            "homed_subscription_resyncs_total",
            "Subscribers that fell too far behind and were resynchronised.",
            subscriptions.resyncs
        )
        out.gauge("homed_accessories_attached", "Accessories whose link is attached now.", UInt64(links.attachedCount))
        out.gauge(
            "homed_accessories_advertised_bytes",
            "Bytes of advertised (unpaired) accessories held.",
            UInt64(max(0, links.advertisedBytes))
        )
        out.counter(
            "homed_pairing_refusals_total",
            "AddAccessory attempts refused for a wrong setup code, or for too many of them.",
            links.pairingRefusals
        )
        out.gauge(
            "homed_store_failed",
            "1 once a commit failed and the store stopped taking changes.",
            UInt64(store.failure == nil ? 0 : 1)
        )
    }

    /// Adds what change streams and the accessory browser hold now to `rpc-client info`'s figures
    /// (``ServerInfoService/addFigures``).
    public func addFigures(to info: inout Home_V1_ServerInfoResponse) {
        info.subscriptionHeldBytes = UInt64(max(0, subscriptions.heldBytes))
        info.advertisedBytes = UInt64(max(0, links.advertisedBytes))
        info.advertisedBytesLimit = UInt64(links.configuration.maxAdvertisedBytes)
        if let failure = store.failure {
            info.storeFailure.message = failure.description
            if let cause = failure.cause {
                info.storeFailure.resultCode = cause.resultCode
                info.storeFailure.resultName = cause.resultName
                info.storeFailure.systemErrno = cause.systemErrno
                info.storeFailure.systemErrorName = cause.systemErrorName
            }
        }
    }

    // MARK: Answering

    /// Answers a read with what `body` encodes, at once unless the answer shows changes still being
    /// committed (the home's revision among them): it waits for them, so that no one sees what a
    /// crash could take back, nor a revision that could come to mean another change.
    func answerRead<Request>(
        _ call: ServerCall,
        _ request: Request,
        _ body: (HomeAPI, Request, Caller) throws(APIFailure) -> [UInt8]
    ) {
        guard let caller = caller(of: call) else { return }
        let result = Result { () throws(APIFailure) in try body(self, request, caller) }
        reply(call, with: Outcome(encoded: result), after: store.currentTicket)
    }

    /// Makes the change `body` makes (answering with what it encodes) in one scoped write, answered
    /// once durable; with an idempotency key, the outcome is remembered in the same commit, under a
    /// digest of the method and `requestBytes` as received (a retry sends the same bytes). The
    /// generated decoder's requests and the shortcuts' (``ActionTargetUpdate``) come here alike.
    func answerMutation<Request>(
        _ call: ServerCall,
        _ request: Request,
        _ requestBytes: ArraySlice<UInt8>,
        _ body: (HomeAPI, Request, Caller) throws(APIFailure) -> [UInt8]
    ) {
        guard let caller = caller(of: call) else { return }
        guard let key = Self.idempotencyKey(of: call) else {
            commit(call, request, caller, body)
            return
        }
        do throws(HomeServiceError) {
            try HomeStore.checkIdempotencyKey(key)
        } catch {
            call.fail(APIFailure(error, field: "metadata \(Self.idempotencyKeyMetadata)").status)
            return
        }
        if let record = store.idempotencyRecord(for: caller.account, key: key) {
            guard RequestDigest.matches(record.requestDigest, call.method, requestBytes) else {
                call.fail(
                    CallStatus(
                        code: .invalidArgument,
                        message: "idempotency key \"\(key)\" was used for a different request within 24 hours"
                    )
                )
                return
            }
            reply(call, with: Outcome(stored: record.outcome), after: record.ticket)
            return
        }
        let digest = RequestDigest.of(call.method, requestBytes)
        // The change and its remembered outcome go into one commit; a refusal is remembered too.
        var outcome: Outcome?
        var (_, ticket) = store.write(from: caller.session) { () throws(HomeServiceError) in
            let result = Result { () throws(APIFailure) -> [UInt8] in try body(self, request, caller) }
            let made = Outcome(encoded: result)
            outcome = made
            if case .success = result {
                try store.recordIdempotency(for: caller.account, key: key, requestDigest: digest, outcome: made.stored)
            }
        }
        if let made = outcome, case .failure = made.kind {
            // Nothing changed: remember the refusal in a commit of its own.
            ticket =
                store.write(from: caller.session) { () throws(HomeServiceError) in
                    try store.recordIdempotency(
                        for: caller.account,
                        key: key,
                        requestDigest: digest,
                        outcome: made.stored
                    )
                }.ticket
        }
        reply(
            call,
            with: outcome ?? Outcome(failure: CallStatus(code: .internal, message: "no outcome")),
            after: ticket
        )
    }

    /// Makes the change `body` makes in one scoped write and answers once it is durable.
    private func commit<Request>(
        _ call: ServerCall,
        _ request: Request,
        _ caller: Caller,
        _ body: (HomeAPI, Request, Caller) throws(APIFailure) -> [UInt8]
    ) {
        let (result, ticket) = store.write(from: caller.session) { () throws(APIFailure) -> [UInt8] in
            try body(self, request, caller)
        }
        reply(call, with: Outcome(encoded: result), after: ticket)
    }

    /// Answers once `ticket` is durable; a store that failed to commit answers INTERNAL and
    /// acknowledges nothing.
    func reply(_ call: consuming ServerCall, with outcome: consuming Outcome, after ticket: CommitTicket) {
        commitAnswers.answer(call, with: outcome, after: ticket)
    }

    /// Runs a handler that answers `call` itself (a stream, or a call waiting for an accessory).
    func answerLater<Request>(
        _ call: ServerCall,
        _ request: Request,
        _ body: (HomeAPI, ServerCall, Request, Caller) throws(APIFailure) -> Void
    ) {
        answerLater(call) { api, call, caller throws(APIFailure) in try body(api, call, request, caller) }
    }

    /// Runs a handler that answers `call` itself, with the request in its closure (a shortcut's: a
    /// request passed through the generic form was copied twice, through its value witnesses).
    func answerLater(_ call: ServerCall, _ body: (HomeAPI, ServerCall, Caller) throws(APIFailure) -> Void) {
        guard let caller = caller(of: call) else { return }
        do {
            try body(self, call, caller)
        } catch {
            call.fail(error.status)
        }
    }

    /// The authenticated caller, or `nil` after failing the call (no principal, or a token revoked
    /// or expired).
    func caller(of call: ServerCall) -> Caller? {
        guard let principal = call.principal as? UserPrincipal else {
            call.fail(CallStatus(code: .unauthenticated, message: RPCServer.noTokenMessage))
            return nil
        }
        guard principal.hasLiveToken(in: store) else {
            let message = TokenMessages.refusal(of: principal, at: store.currentTime, onStream: false)
            call.fail(CallStatus(code: .unauthenticated, message: message))
            return nil
        }
        return Caller(principal: principal)
    }

    private static func idempotencyKey(of call: ServerCall) -> String? {
        call.metadata.first { $0.key == idempotencyKeyMetadata }.map { String(decoding: $0.value, as: UTF8.self) }
    }
}

/// What a mutation answered: a response message or a failure status, storable as bytes.
struct Outcome {
    enum Kind {
        case success([UInt8])
        case failure(CallStatus)
    }

    let kind: Kind

    init<Response: SwiftProtobuf.Message>(_ result: Result<Response, APIFailure>) {
        switch result {
        case .success(let response):
            if let bytes = try? response.encodedBytes() {
                kind = .success(bytes)
            } else {
                kind = .failure(CallStatus(code: .internal, message: "cannot encode \(Response.protoMessageName)"))
            }
        case .failure(let failure):
            kind = .failure(failure.status)
        }
    }

    init(failure: CallStatus) {
        kind = .failure(failure)
    }

    /// From a response already encoded (by hand, see ``ProtoWriter``).
    /// Consumed: the bytes move into the outcome. Kept, the result was destroyed afterwards through
    /// the runtime's generic value witnesses (a forwarded write's answer: 300 instructions).
    init(encoded result: consuming Result<[UInt8], APIFailure>) {
        switch consume result {
        case .success(let bytes): kind = .success(bytes)
        case .failure(let failure): kind = .failure(failure.status)
        }
    }

    /// The stored form: a `home.v1.StoredOutcome`.
    var stored: [UInt8] {
        var message = Home_V1_StoredOutcome()
        switch kind {
        case .success(let bytes):
            // By hand (``ProtoWriter``): the generated encoder, through a `Data` copy, cost a keyed
            // write 1,300 instructions.
            guard !bytes.isEmpty else { return [] }
            return ProtoWriter.message(length: ProtoWriter.delimitedLength(bytes.count, field: 3)) { writer in
                writer.delimited(3, length: bytes.count) { writer in
                    bytes.withUnsafeBytes { writer.appendBytes(copying: $0) }
                }
            }
        case .failure(let status):
            message.statusCode = UInt32(status.code.rawValue)
            message.statusMessage = status.message
            message.details = Data(status.details)
        }
        return (try? message.encodedBytes()) ?? []
    }

    init(stored bytes: [UInt8]) {
        guard let message = try? Home_V1_StoredOutcome(serializedBytes: bytes) else {
            kind = .failure(CallStatus(code: .dataLoss, message: "the remembered outcome cannot be read"))
            return
        }
        if message.statusCode == 0 {
            kind = .success([UInt8](message.response))
        } else {
            kind = .failure(
                CallStatus(
                    code: StatusCode(rawValue: UInt16(clamping: message.statusCode)),
                    message: message.statusMessage,
                    details: [UInt8](message.details)
                )
            )
        }
    }
}
