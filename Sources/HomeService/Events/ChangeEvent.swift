/// Who caused a change: a user account, an accessory reporting on its own, or the server itself
/// (a timer trigger firing, start-up housekeeping).
public enum Initiator: Hashable, Sendable {
    case account(AccountID)
    case accessory(AccessoryID)
    case server
}

/// One change to a home, as a subscriber sees it. Which fields are set depends on the kind:
///
/// - `object`: the object the change is about (the room added, the accessory renamed, the
///   characteristic whose value changed, the user added...).
/// - `container`: where it happened when that is not the home itself (the zone a room joined, the
///   service group, the accessory of a renamed service, the room an accessory moved to).
/// - `name`: the new name, for additions and renames; the associated service type for that kind.
/// - `value`: a characteristic's new value.
/// - `flag`: reachability, administrator access, a trigger's enabled state.
public struct ChangeEvent: Hashable, Sendable {
    public var kind: ChangeKind
    public var object: UniqueIdentifier?
    public var container: UniqueIdentifier?
    public var name: String?
    public var value: CharacteristicValue?
    public var flag: Bool?

    public init(
        _ kind: ChangeKind,
        object: UniqueIdentifier? = nil,
        container: UniqueIdentifier? = nil,
        name: String? = nil,
        value: CharacteristicValue? = nil,
        flag: Bool? = nil
    ) {
        self.kind = kind
        self.object = object
        self.container = container
        self.name = name
        self.value = value
        self.flag = flag
    }
}

/// A change as the home's log keeps it: the event, the home's revision it produced, when, and who.
///
/// Immutable, and a class so that the batch, the log, the commit queue and every subscriber's queue
/// share one copy: as a struct of a dozen fields each of those steps copied and destroyed it field by
/// field (about 2,000 instructions per change).
public final class HomeChange: Hashable, Sendable {
    public let home: HomeID
    public let revision: UInt64
    /// Milliseconds since the Unix epoch.
    public let time: Int64
    public let initiator: Initiator
    public let event: ChangeEvent
    /// The session the change came through, while this server runs (not stored: a change replayed
    /// after a restart has none).
    public let session: SessionID?

    public init(
        home: HomeID,
        revision: UInt64,
        time: Int64,
        initiator: Initiator,
        event: ChangeEvent,
        session: SessionID? = nil
    ) {
        self.home = home
        self.revision = revision
        self.time = time
        self.initiator = initiator
        self.event = event
        self.session = session
    }

    public static func == (left: HomeChange, right: HomeChange) -> Bool {
        left === right
            || (left.home == right.home && left.revision == right.revision && left.time == right.time
                && left.initiator == right.initiator && left.event == right.event && left.session == right.session)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(home)
        hasher.combine(revision)
        hasher.combine(time)
        hasher.combine(initiator)
        hasher.combine(event)
        hasher.combine(session)
    }
}
