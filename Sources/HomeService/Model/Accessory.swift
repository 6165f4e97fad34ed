/// An accessory in a home: standalone, a bridge, or bridged behind a bridge.
public struct Accessory: Hashable, Sendable {
    public let id: AccessoryID
    public let home: HomeID
    /// Stored by the server; renaming does not reach the device.
    public internal(set) var name: String
    public internal(set) var room: RoomID
    /// HAP's accessory category number (1 Other, 2 Bridge, 5 Lightbulb, ...).
    public let category: Int
    public let manufacturer: String
    public let model: String
    public internal(set) var firmwareVersion: String
    public let supportsIdentify: Bool
    /// The bridge this accessory sits behind, if it is bridged.
    public let bridge: AccessoryID?
    /// The accessories behind this one, if it is a bridge.
    public internal(set) var bridgedAccessories: [AccessoryID]
    public internal(set) var isBlocked: Bool
    public internal(set) var isReachable: Bool
    public internal(set) var services: [ServiceID]
    /// The SHA-256 of the pairing credential it proves itself with on reconnect (top-level
    /// accessories only: a bridged accessory comes through its bridge); `nil` when it has none.
    var credentialHash: [UInt8]?
    let sequence: Int64

    public var isBridge: Bool { !bridgedAccessories.isEmpty }
    public var isBridged: Bool { bridge != nil }
}

/// A service of an accessory.
public struct Service: Hashable, Sendable {
    public let id: ServiceID
    public let accessory: AccessoryID
    public let home: HomeID
    /// The HAP type UUID (uppercase).
    public let type: String
    public internal(set) var name: String
    public let isPrimary: Bool
    public let isUserInteractive: Bool
    /// What a generic service (Outlet, Switch, Contact Sensor) really controls, e.g. a Lightbulb.
    public internal(set) var associatedServiceType: String?
    public let linkedServices: [ServiceID]
    public internal(set) var characteristics: [CharacteristicID]
    let sequence: Int64
}

/// A characteristic: its type, what may be done with it, and what its values may be. Its last value
/// lives in the ``CharacteristicCache`` at ``slot``.
public struct Characteristic: Hashable, Sendable {
    public let id: CharacteristicID
    public let service: ServiceID
    public let accessory: AccessoryID
    public let home: HomeID
    /// Its type, properties and metadata, shared with every characteristic that has the same.
    public let kind: CharacteristicKind
    /// Where its value lives in the cache.
    public let slot: CharacteristicCache.Slot
    let sequence: Int64

    /// The HAP type UUID (uppercase).
    public var type: String { kind.type }
    public var properties: CharacteristicProperties { kind.properties }
    public var metadata: CharacteristicMetadata { kind.metadata }

    /// The catalog name for standard types, else the UUID: for messages.
    public var displayName: String { kind.displayName }
}
