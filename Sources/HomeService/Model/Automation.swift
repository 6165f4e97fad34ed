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
    /// Repeat interval in seconds (whole minutes, 5 minutes to 5 weeks), or `nil` for a one-shot.
    public internal(set) var recurrence: Int64?
    public internal(set) var actionSets: [ActionSetID]
    public internal(set) var lastFireDate: Int64?
    let sequence: Int64
}
