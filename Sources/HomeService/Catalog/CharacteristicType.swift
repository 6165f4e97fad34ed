/// A standard characteristic type from HAP-CATALOG.md.
public struct CharacteristicType: Hashable, Sendable {
    /// The catalog's name, e.g. "Target Temperature".
    public let name: String
    /// The short form of the UUID, e.g. 0x35.
    public let shortID: UInt32
    /// The `HMCharacteristicType…` suffix, where HomeKit names it.
    public let homeKitName: String?
    public let properties: CharacteristicProperties
    public let metadata: CharacteristicMetadata

    /// The full UUID, e.g. "00000035-0000-1000-8000-0026BB765291".
    public var uuid: String { HAPUUID.full(shortID) }
}

/// A standard service type from HAP-CATALOG.md.
public struct ServiceType: Hashable, Sendable {
    /// The catalog's name, e.g. "Lightbulb".
    public let name: String
    public let shortID: UInt32
    /// The `HMServiceType…` suffix, where HomeKit names it.
    public let homeKitName: String?
    /// Short ids of the characteristics every instance must have.
    public let required: [UInt32]
    /// Short ids of the characteristics an instance may have.
    public let optional: [UInt32]

    public var uuid: String { HAPUUID.full(shortID) }
}

/// HAP's UUIDs: Apple's types are `0000XXXX-0000-1000-8000-0026BB765291` with a short id.
public enum HAPUUID {
    public static let appleBaseSuffix = "-0000-1000-8000-0026BB765291"

    /// The full, uppercase UUID for a short id.
    public static func full(_ shortID: UInt32) -> String {
        let hex = String(shortID, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 8 - hex.count)) + hex + appleBaseSuffix
    }

    /// The short id of an Apple-defined UUID (any case), or `nil` for a custom UUID.
    public static func shortID(of uuid: String) -> UInt32? {
        let upper = uuid.uppercased()
        guard upper.count == 36, upper.hasSuffix(appleBaseSuffix) else { return nil }
        return UInt32(upper.prefix(8), radix: 16)
    }
}
