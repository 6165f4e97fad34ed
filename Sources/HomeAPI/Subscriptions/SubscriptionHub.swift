import Foundation
import HomeProto
import HomeService
import RPCServer
import RPCServices
import SwiftProtobuf
import Wire

/// Every open `Subscribe` stream, fed with each change once it is committed.
///
/// A stream starts in each home from a committed point: a resume revision, or the state it reads
/// now (a snapshot), sent only once the store's current ticket is durable. From there it replays the
/// home's log and then takes live changes, so there is no gap and no duplicate. What cannot be sent
/// yet waits in the subscription's bounded queue (``PendingEvents``); past its bound the subscriber is
/// resynchronised with the home's state. Nothing here blocks: a subscriber that does not read only
/// costs its own queue, and the queues of one connection, and of all, are bounded in bytes.
final class SubscriptionHub {
    /// How a stream starts in one home.
    enum Start {
        /// With the changes after this revision.
        case after(UInt64)
        /// With the home's state, then the changes after it.
        case snapshot
        /// With a Resync carrying the home's state, then the changes after it.
        case resync(Home_V1_Resync.Reason)
        /// With a HomeAdded carrying the home's state (the account was just added to it).
        case joined(Initiator)
    }

    /// The kinds that have an event message (the others are HomeKit callbacks this server has no
    /// cause for; docs/API.md says why).
    static let deliverableKinds = ChangeKinds(
        Home_V1_EventKind.allCases.compactMap { ChangeKind(rawValue: UInt8(clamping: $0.rawValue)) }
    )

    private unowned let api: HomeAPI
    private var store: HomeStore { api.store }
    let maxPendingLayoutEvents: Int
    /// What the streams hold, per connection and in all, against their bounds.
    private var held: HeldBytes
    /// What all streams hold now (for `rpc-client info`).
    var heldBytes: Int { held.held }
    /// Every open stream, by serial number (never reused, so a late callback cannot reach another).
    private var subscriptions: [Int: Subscription] = [:]
    private var nextSerial = 0
    /// The streams following each home, so that a change visits only those.
    private var followers: [HomeID: [Int: Subscription]] = [:]
    /// The streams of every home of their account: they also look at homes they do not follow yet,
    /// for the account's new homes.
    private var followersOfEveryHome: [Int: Subscription] = [:]
    /// Messages sent on change streams (events, snapshots, resyncs), for the metrics endpoint.
    private(set) var eventsDelivered: UInt64 = 0
    /// Value changes a slow subscriber never saw: coalesced into a later value of the same
    /// characteristic (each delivered event's `skipped`).
    private(set) var eventsSkipped: UInt64 = 0
    /// Subscribers that fell too far behind and were resynchronised.
    private(set) var resyncs: UInt64 = 0
    /// Open change streams.
    var openCount: Int { subscriptions.count }
    /// The latest value change as sent to subscribers (see ``encoded(_:skipped:for:)``).
    private var lastSharedValue: (home: HomeID, revision: UInt64, bytes: [UInt8])?

    /// - Parameter maxHeldBytes: what one connection's streams, and all streams, may hold
    ///   (``HeldBytes``).
    init(api: HomeAPI, maxPendingLayoutEvents: Int, maxHeldBytes: (perConnection: Int, inAll: Int)) {
        self.api = api
        self.maxPendingLayoutEvents = maxPendingLayoutEvents
        held = HeldBytes(perConnection: maxHeldBytes.perConnection, inAll: maxHeldBytes.inAll)
    }

    // MARK: Opening

    /// Starts a stream for a checked request: `starts` says where it begins in each home.
    func open(_ subscription: Subscription, starts: [(HomeID, Start)]) {
        nextSerial += 1
        subscription.serial = nextSerial
        let id = subscription.serial
        subscriptions[id] = subscription
        subscription.connectionHeld = held.open(in: subscription.caller.session)
        held.add(subscription.characteristics.heldBytes, to: subscription.connectionHeld)
        if let refusal = held.refusal(for: subscription.connectionHeld) {
            end(subscription, refusal)
            return
        }
        if subscription.followsEveryHome { followersOfEveryHome[id] = subscription }
        // Callbacks find the subscription by id: a weak reference would give it a side table, and
        // every retain on the delivery path would take the slow path (seen in profiles). The hub
        // lives as long as the API.
        subscription.call.onCancel = { [unowned self] in
            if let subscription = subscriptions[id] { forget(subscription) }
        }
        subscription.call.onWritable = { [unowned self] in
            if let subscription = subscriptions[id] { flush(subscription) }
        }
        for (home, start) in starts { begin(home, in: subscription, start) }
        if !subscription.followsEveryHome && subscription.homes.isEmpty { subscription.endsWhenDrained = true }
        flush(subscription)
    }

    /// Starts (or restarts) the stream in one home from `start`, once its starting point is durable.
    private func begin(_ home: HomeID, in subscription: Subscription, _ start: Start) {
        subscription.openings += 1
        let opening = subscription.openings
        follow(home, by: subscription, from: .opening(opening))
        let after: UInt64
        var prepared: [UInt8]?
        if case .after(let revision) = start {
            after = revision
        } else {
            guard let view = api.homeView(home, for: subscription.caller) else {
                stopFollowing(home, in: subscription)
                return
            }
            after = view.home.revision
            prepared = Self.stateEvent(view, for: subscription.caller.account, start)
        }
        // The state read now may include changes still being committed: send nothing of this home
        // before they are durable, so a revision the subscriber sees can never be taken back.
        let id = subscription.serial
        store.whenCommitted(store.currentTicket) { [unowned self] failure in
            guard let subscription = subscriptions[id],
                case .opening(opening, let homeRemoval)? = subscription.homes[home]
            else {
                return
            }
            if let failure {
                self.end(subscription, HomeKitStatus.uncommitted(failure))
                return
            }
            if let prepared {
                self.changePending(of: subscription) { $0.append(encoded: prepared) }
                if let refusal = self.held.refusal(for: subscription.connectionHeld) {
                    self.end(subscription, refusal)
                    return
                }
            }
            subscription.homes[home] = .live(after: after)
            self.replay(home, after: after, homeRemoval: homeRemoval, in: subscription)
            self.flush(subscription)
        }
    }

    /// Queues the home's retained changes after `revision`, or resynchronises when they are gone.
    /// The account was a member at `revision`; if it has left since, the change that says so is
    /// among them or still to be published, and ``consider(_:for:)`` stops the home there.
    private func replay(
        _ home: HomeID,
        after revision: UInt64,
        homeRemoval: HomeChange?,
        in subscription: Subscription
    ) {
        guard let replay = store.committedChanges(in: home, after: revision) else {
            // The home is removed (its log with it): its removal was published while the stream
            // opened, or will be once it is committed.
            if let homeRemoval { consider(homeRemoval, for: subscription) }
            return
        }
        switch replay {
        case .changes(let changes) where Self.joins(subscription.caller.account, before: changes):
            // The resume point is from before the account joined: what happened in the home before
            // then is not its to see.
            begin(home, in: subscription, .resync(.resumePointNotRetained))
        case .changes(let changes):
            for change in changes {
                // An overflow restarts the home: the rest of the replay is superseded.
                guard case .live? = subscription.homes[home] else { return }
                consider(change, for: subscription)
            }
        case .resyncNeeded:
            begin(home, in: subscription, .resync(.resumePointNotRetained))
        }
    }

    /// Whether the first change in `changes` that adds or removes `account` adds it.
    private static func joins(_ account: AccountID, before changes: [HomeChange]) -> Bool {
        let own = changes.first {
            ($0.event.kind == .userAdded || $0.event.kind == .userRemoved) && $0.event.object == account.raw
        }
        return own?.event.kind == .userAdded
    }

    /// The event that starts a home's stream with its whole state: a snapshot, a resync, or the
    /// home added. Each carries the home as its last field, and the event carries each as its
    /// payload, its last field (events.proto's numbers), so ``HomeEncoder`` writes them around it.
    static func stateEvent(_ view: HomeStore.HomeView, for account: AccountID, _ start: Start) -> [UInt8] {
        var event = Home_V1_Event()
        event.homeID = ProtoEncoding.data(view.home.id)
        event.revision = view.home.revision
        event.timeMs = HomeStore.wallClock()
        let payload: ProtoWriter.Carrier
        switch start {
        case .after, .snapshot:
            payload = ([], 10)
        case .resync(let reason):
            payload = ((try? Home_V1_Resync.with { $0.reason = reason }.encodedBytes()) ?? [], 11)
        case .joined(let initiator):
            event.initiator = HomeAPI.initiator(initiator, in: view.home.id)
            payload = ([], 103)
        }
        let eventFields = (try? event.encodedBytes()) ?? []
        // The payload's field in the event, then the home's in the payload (2 in Resync, else 1).
        let homeField: UInt32 = payload.field == 11 ? 2 : 1
        return HomeEncoder.encode(view, caller: account, in: [(eventFields, payload.field), (payload.head, homeField)])
    }

    // MARK: Delivering

    /// The store's change observer: every committed change, in revision order per home.
    func publish(_ change: HomeChange) {
        var audience = followers[change.home].map { Array($0.values) } ?? []
        if !followersOfEveryHome.isEmpty && (change.event.kind == .homeAdded || change.event.kind == .userAdded) {
            audience += followersOfEveryHome.values.filter { $0.homes[change.home] == nil }
        }
        for subscription in audience {
            consider(change, for: subscription)
            flush(subscription)
        }
    }

    /// Queues `change` for the subscriber if it follows the home and asked for it.
    private func consider(_ change: HomeChange, for subscription: Subscription) {
        // An earlier delivery in the same publish may have ended it.
        guard !subscription.isClosed else { return }
        let account = subscription.caller.account
        guard let followed = subscription.homes.index(forKey: change.home) else {
            guard subscription.followsEveryHome else { return }
            if change.event.kind == .homeAdded, change.initiator == .account(account) {
                follow(change.home, by: subscription, from: .live(after: change.revision - 1))
                consider(change, for: subscription)
            } else if change.event.kind == .userAdded, change.event.object == account.raw {
                begin(change.home, in: subscription, .joined(change.initiator))
            }
            return
        }
        // By position: one hashed lookup per delivery, not one to read and one to update.
        switch subscription.homes.values[followed] {
        case .live(let after) where change.revision > after:
            subscription.homes.values[followed] = .live(after: change.revision)
        case .opening(let opening, nil) where change.event.kind == .homeRemoved:
            subscription.homes.values[followed] = .opening(opening, homeRemoval: change)
            return
        case .live, .opening:
            return
        }
        let leaves = subscription.endsMembership(change)
        let wanted = subscription.wants(change) { [store] in store.notificationEnabled(on: $0, for: account) }
        guard leaves || wanted else { return }
        if subscription.pending.isEmpty && subscription.call.isWritable {
            // Keeping up: straight out, without queueing.
            subscription.call.send(encoded(change, skipped: 0, for: subscription.caller))
            eventsDelivered &+= 1
            if subscription.call.hasEnded { forget(subscription) }
        } else if changePending(of: subscription, { $0.append(change, always: leaves) }) == .overflow {
            resynchronise(subscription)
            return
        } else if let refusal = held.refusal(for: subscription.connectionHeld) {
            end(subscription, refusal)
            return
        }
        if leaves { stopFollowing(change.home, in: subscription) }
    }

    /// The subscriber fell too far behind: what waits is dropped, and every home it follows
    /// restarts with a Resync.
    private func resynchronise(_ subscription: Subscription) {
        resyncs &+= 1
        changePending(of: subscription) { $0.removeAll() }
        for home in Array(subscription.homes.keys) {
            begin(home, in: subscription, .resync(.subscriberTooSlow))
        }
    }

    private func follow(_ home: HomeID, by subscription: Subscription, from progress: Subscription.Progress) {
        subscription.homes[home] = progress
        followers[home, default: [:]][subscription.serial] = subscription
    }

    private func stopFollowing(_ home: HomeID, in subscription: Subscription) {
        subscription.homes[home] = nil
        unindex(subscription, from: home)
        if !subscription.followsEveryHome && subscription.homes.isEmpty { subscription.endsWhenDrained = true }
    }

    /// Sends what waits while the client's credit and the connection allow.
    private func flush(_ subscription: Subscription) {
        let call = subscription.call
        while !subscription.isClosed, !subscription.pending.isEmpty {
            guard call.isWritable else {
                call.notifyWhenWritable()
                return
            }
            guard let entry = changePending(of: subscription, { $0.popFirst() }) else { break }
            switch entry {
            case .encoded(let bytes):
                call.send(bytes)
            case .change(let change, let skipped):
                call.send(encoded(change, skipped: skipped, for: subscription.caller))
                eventsSkipped &+= skipped
            }
            eventsDelivered &+= 1
            // A message over the peer's frame size ends the call.
            if call.hasEnded { forget(subscription) }
        }
        if subscription.endsWhenDrained && subscription.pending.isEmpty { end(subscription, .ok) }
    }

    /// A value change is the same message for every subscriber that gets it whole (not its own, none
    /// skipped): encode it once, not once per subscriber.
    private func encoded(_ change: HomeChange, skipped: UInt64, for caller: Caller) -> [UInt8] {
        let shared =
            change.event.kind == .characteristicValueUpdated && skipped == 0 && change.session != caller.session
        if shared, let last = lastSharedValue, last.home == change.home, last.revision == change.revision {
            return last.bytes
        }
        let bytes =
            change.event.kind == .characteristicValueUpdated
            ? ValueEventEncoding.encoded(
                change,
                service: api.service(ofValueEvent: change.event, for: caller),
                skipped: skipped,
                own: change.session == caller.session
            )
            : (try? api.eventMessage(change, skipped: skipped, for: caller).encodedBytes()) ?? []
        if shared { lastSharedValue = (change.home, change.revision, bytes) }
        return bytes
    }

    // MARK: Ending

    /// Ends every stream (the server is draining: the client resubscribes elsewhere or later).
    func endAll(_ status: CallStatus) {
        for subscription in Array(subscriptions.values) { end(subscription, status) }
    }

    /// Ends the streams whose token was revoked or has expired.
    func endUnauthorized() {
        let now = store.currentTime
        for subscription in Array(subscriptions.values) {
            let principal = subscription.caller.principal
            guard let token = principal.token, !store.isTokenLive(token) || now >= principal.expiresAt else { continue }
            let message = TokenMessages.refusal(of: principal, at: now, onStream: true)
            end(subscription, CallStatus(code: .unauthenticated, message: message))
        }
    }

    private func end(_ subscription: Subscription, _ status: CallStatus) {
        forget(subscription)
        subscription.call.finish(status)
    }

    /// Changes what `subscription` has waiting, keeping the bytes its connection's streams and all
    /// streams hold unread.
    @discardableResult
    private func changePending<Result>(
        of subscription: Subscription,
        _ change: (inout PendingEvents) -> Result
    ) -> Result {
        let before = subscription.pending.heldBytes
        let result = change(&subscription.pending)
        held.add(subscription.pending.heldBytes - before, to: subscription.connectionHeld)
        return result
    }

    private func forget(_ subscription: Subscription) {
        // Once: its connection's count of streams must not be taken down twice.
        guard !subscription.isClosed else { return }
        subscription.isClosed = true
        changePending(of: subscription) { $0.removeAll() }
        held.add(-subscription.characteristics.heldBytes, to: subscription.connectionHeld)
        held.close(in: subscription.caller.session, subscription.connectionHeld)
        subscriptions[subscription.serial] = nil
        followersOfEveryHome[subscription.serial] = nil
        for home in subscription.homes.keys { unindex(subscription, from: home) }
    }

    private func unindex(_ subscription: Subscription, from home: HomeID) {
        followers[home]?[subscription.serial] = nil
        if followers[home]?.isEmpty == true { followers[home] = nil }
    }
}
