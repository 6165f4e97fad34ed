/// An action set: characteristic writes executed together, in no particular order.
public struct ActionSet: Hashable, Sendable {
    /// HomeKit's action set types: the four built-in sets every home has, and the user's own.
    public enum Kind: Int, CaseIterable, Sendable {
        case userDefined = 0
        case wakeUp = 1
        case sleep = 2
        case homeDeparture = 3
        case homeArrival = 4

        /// Built-in sets and the names they start with.
        static let builtInNames: [(Kind, String)] = [
            (.wakeUp, "Good Morning"), (.sleep, "Good Night"), (.homeDeparture, "Leave Home"),
            (.homeArrival, "Arrive Home"),
        ]
    }

    public let id: ActionSetID
    public let home: HomeID
    public internal(set) var name: String
    public let kind: Kind
    public internal(set) var actions: [CharacteristicWriteAction]
    /// Milliseconds since the Unix epoch.
    public internal(set) var lastExecutionDate: Int64?
    let sequence: Int64
    /// Whether its writes are out with the accessories now (HomeKit's `isExecuting`; not stored:
    /// an execution does not outlive the process).
    public internal(set) var isExecuting = false

    public var isBuiltIn: Bool { kind != .userDefined }
}

/// An action: write `targetValue` to a characteristic.
public struct CharacteristicWriteAction: Hashable, Sendable {
    public let id: ActionID
    public let characteristic: CharacteristicID
    public internal(set) var targetValue: CharacteristicValue

    /// A new action, not yet in any action set (HomeKit's `HMCharacteristicWriteAction(characteristic:targetValue:)`).
    public init(id: ActionID = .random(), characteristic: CharacteristicID, targetValue: CharacteristicValue) {
        self.id = id
        self.characteristic = characteristic
        self.targetValue = targetValue
    }
}

/// A timer trigger: executes its action sets at a fire date, optionally repeating. New triggers are
/// disabled.
public struct TimerTrigger: Hashable, Sendable {
    public let id: TriggerID
    public let home: HomeID
    public internal(set) var name: String
    public internal(set) var isEnabled: Bool
    /// Milliseconds since the Unix epoch, on a whole minute.
    public internal(set) var fireDate: Int64
    /// How often it repeats, in calendar units of its home's time zone (5 minutes to 5 weeks), or
    /// `nil` for a one-shot.
    public internal(set) var recurrence: TriggerRecurrence?
    public internal(set) var actionSets: [ActionSetID]
    public internal(set) var lastFireDate: Int64?
    let sequence: Int64
}

/// A timer trigger's repeat interval, in one calendar unit (HomeKit's recurrence date components).
/// Days and weeks follow the home's time zone: "every day at 07:00" stays at 07:00 across
/// daylight-saving changes, so such a day may last 23 or 25 hours.
public struct TriggerRecurrence: Hashable, Sendable, CustomStringConvertible {
    public enum Unit: String, CaseIterable, Sendable {
        /// Only as input: whole minutes are kept as minutes (anything else is refused with 69).
        case second
        case minute
        case hour
        case day
        case week

        /// The unit's length in seconds (a day's nominal length: 86,400).
        public var seconds: Int64 {
            switch self {
            case .second: 1
            case .minute: 60
            case .hour: 3600
            case .day: 86_400
            case .week: 604_800
            }
        }
    }

    public let unit: Unit
    public let count: Int64

    /// An unchecked recurrence; ``TriggerRules/checkRecurrence(_:)`` checks and normalizes it.
    public init(_ count: Int64, _ unit: Unit) {
        self.unit = unit
        self.count = count
    }

    public static func minutes(_ count: Int64) -> TriggerRecurrence { TriggerRecurrence(count, .minute) }
    public static func hours(_ count: Int64) -> TriggerRecurrence { TriggerRecurrence(count, .hour) }
    public static func days(_ count: Int64) -> TriggerRecurrence { TriggerRecurrence(count, .day) }
    public static func weeks(_ count: Int64) -> TriggerRecurrence { TriggerRecurrence(count, .week) }

    public var description: String { "\(count) \(unit.rawValue)\(count == 1 ? "" : "s")" }
}
