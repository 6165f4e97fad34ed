import HomeService
import RPCServer

/// One open `Subscribe` stream: what it asked for, where it stands in each home, and what waits
/// to be sent. Loop thread only; the hub drives it.
final class Subscription {
    /// Where the stream stands in one home.
    enum Progress {
        /// Waiting for the state it starts from to be committed; changes arriving meanwhile are
        /// left to the log replay that follows (a removal of the home, whose log goes with it, is
        /// kept aside). A later opening (numbered) supersedes this one. Indirect: every delivery
        /// reads the progress, and copying a whole `HomeChange` inline cost more than the lookup.
        indirect case opening(Int, homeRemoval: HomeChange? = nil)
        /// Changes after this revision are queued.
        case live(after: UInt64)
    }

    let call: ServerCall
    let caller: Caller
    /// With no homes named, the stream follows every home of the account, also ones it joins later.
    let followsEveryHome: Bool
    /// `nil`: every kind.
    let kinds: ChangeKinds?
    /// Value events for these come whether or not the account enabled notifications on them.
    let characteristics: NamedCharacteristics
    let includeOwnChanges: Bool

    /// Set by the hub when the stream opens.
    var serial = 0
    var homes: [HomeID: Progress] = [:]
    var pending: PendingEvents
    var openings = 0
    /// What the streams of this one's connection hold (shared by them; the hub sets it).
    var connectionHeld = HeldBytes.Connection()
    /// Every named home is gone: the stream ends with OK once what waits is sent.
    var endsWhenDrained = false
    var isClosed = false

    init(
        call: ServerCall,
        caller: Caller,
        followsEveryHome: Bool,
        kinds: ChangeKinds?,
        characteristics: Set<CharacteristicID>,
        includeOwnChanges: Bool,
        maxPendingLayoutEvents: Int
    ) {
        self.call = call
        self.caller = caller
        self.followsEveryHome = followsEveryHome
        self.kinds = kinds
        self.characteristics = NamedCharacteristics(characteristics)
        self.includeOwnChanges = includeOwnChanges
        self.pending = PendingEvents(maxLayoutEvents: maxPendingLayoutEvents)
    }

    /// Whether `change` ends the account's membership of its home (after it, nothing more of that
    /// home may reach the stream).
    func endsMembership(_ change: HomeChange) -> Bool {
        switch change.event.kind {
        case .homeRemoved: return true
        case .userRemoved: return change.event.object == caller.account.raw
        default: return false
        }
    }

    /// Whether `change` (in a followed home) is one this stream asked for.
    func wants(_ change: HomeChange, notificationEnabled: (CharacteristicID) -> Bool) -> Bool {
        if change.session == caller.session && !includeOwnChanges { return false }
        let kind = change.event.kind
        if let kinds, !kinds.contains(kind) { return false }
        switch kind {
        case .primaryHomeUpdated:
            // Each account has its own primary home.
            return change.event.container == caller.account.raw
        case .characteristicValueUpdated:
            guard let raw = change.event.object else { return false }
            let id = CharacteristicID(raw)
            return characteristics.contains(id) || notificationEnabled(id)
        default:
            return SubscriptionHub.deliverableKinds.contains(kind)
        }
    }
}
