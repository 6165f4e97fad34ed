public import Foundation
public import HomeProto
public import UV

/// Where a server listens (`HOST:PORT` or `unix:PATH` through `Endpoint(parsing:)`), named here so
/// that a package using the SDK needs no other import.
public typealias Endpoint = UV.Endpoint

// The model values the SDK returns: the protocol's messages, which are Swift value types.
/// A home, alone (as listed) or with everything in it (``HomeHandle/get()``).
public typealias Home = Home_V1_Home
/// A room.
public typealias Room = Home_V1_Room
/// A zone and the rooms in it.
public typealias Zone = Home_V1_Zone
/// An accessory with its services, room, reachability and identity.
public typealias Accessory = Home_V1_Accessory
/// A service of an accessory, with its characteristics.
public typealias Service = Home_V1_Service
/// A characteristic: type, properties, metadata and cached value.
public typealias Characteristic = Home_V1_Characteristic
/// A characteristic's value, one of its formats (`.bool(_:)`, `.int(_:)`, ...).
public typealias CharacteristicValue = Home_V1_CharacteristicValue
/// A service group and its services.
public typealias ServiceGroup = Home_V1_ServiceGroup
/// An action set: its writes, type, and whether it is executing.
public typealias ActionSet = Home_V1_ActionSet
/// One write of an action set: a characteristic and its target value.
public typealias CharacteristicWriteAction = Home_V1_CharacteristicWriteAction
/// A timer trigger: fire date, recurrence, action sets, enabled.
public typealias TimerTrigger = Home_V1_TimerTrigger
/// How often a trigger repeats.
public typealias Recurrence = Home_V1_Recurrence
/// A member of a home and its access.
public typealias User = Home_V1_User
/// An account on the server.
public typealias Account = Home_V1_Account
/// A token's id, account and times, never its secret.
public typealias TokenInfo = Home_V1_TokenInfo
/// What a token may do: `.read` (reads and subscriptions), `.control` (also writes, identify,
/// action sets), `.full` (everything its account may).
public typealias TokenScope = Home_V1_TokenScope

/// What a new token is limited to; each default takes the calling token's limit (none for an
/// unlimited token).
public struct TokenRequestLimits: Sendable {
    /// A label ListTokens shows.
    public var name: String
    /// Its cap; `.unspecified`: the calling token's.
    public var scope: TokenScope
    /// The homes it may act in; empty: the calling token's (every home of the account).
    public var homes: [UUID]
    /// How long it lives (whole seconds); `nil`: as long as the calling token.
    public var lifetime: Duration?

    public init(name: String = "", scope: TokenScope = .unspecified, homes: [UUID] = [], lifetime: Duration? = nil) {
        self.name = name
        self.scope = scope
        self.homes = homes
        self.lifetime = lifetime
    }
}
/// What an accessory advertises: identity, services and characteristics, bridged accessories.
public typealias AccessoryDescription = Home_V1_AccessoryDescription

extension CharacteristicValue {
    /// A boolean value.
    public static func bool(_ value: Bool) -> CharacteristicValue {
        var message = CharacteristicValue()
        message.boolValue = value
        return message
    }

    /// A signed integer value (for any integer format).
    public static func int(_ value: Int64) -> CharacteristicValue {
        var message = CharacteristicValue()
        message.signedValue = value
        return message
    }

    /// A floating-point value.
    public static func float(_ value: Double) -> CharacteristicValue {
        var message = CharacteristicValue()
        message.floatValue = value
        return message
    }

    /// A text value.
    public static func string(_ value: String) -> CharacteristicValue {
        var message = CharacteristicValue()
        message.stringValue = value
        return message
    }
}

extension Recurrence {
    /// `count` units (minutes, hours, days or weeks) of the home's calendar.
    public init(_ count: Int64, _ unit: Unit) {
        self.init()
        self.count = count
        self.unit = unit
    }
}

/// A model value the server names with a 16-byte id: homes, rooms, zones, accessories, services,
/// characteristics, service groups, action sets and their writes, triggers, users, accounts, tokens
/// (not an `AccessoryDescription`: it has no id until advertised).
public protocol ModelObject {
    /// The id as the protocol carries it: 16 bytes.
    var id: Data { get }
}

extension ModelObject {
    /// The object's id as a `UUID`, HomeKit's `uniqueIdentifier`: what ``HomeHandle``'s calls take.
    /// An id of any other length than 16 bytes (never one the server sent) stops the program, as
    /// `Data.uuid` does.
    public var uniqueIdentifier: UUID { id.uuid }
}

extension Home: ModelObject {}
extension Room: ModelObject {}
extension Zone: ModelObject {}
extension Accessory: ModelObject {}
extension Service: ModelObject {}
extension Characteristic: ModelObject {}
extension ServiceGroup: ModelObject {}
extension ActionSet: ModelObject {}
extension CharacteristicWriteAction: ModelObject {}
extension TimerTrigger: ModelObject {}
extension User: ModelObject {}
extension Account: ModelObject {}
extension TokenInfo: ModelObject {}
