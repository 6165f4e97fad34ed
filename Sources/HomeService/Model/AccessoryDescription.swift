/// What an accessory advertises about itself (found by the accessory browser): the input to adding it
/// to a home. Identifiers are the accessory's own and stay stable across re-pairing.
public struct AccessoryDescription: Hashable, Sendable {
    public var id: AccessoryID
    public var name: String
    public var category: Int
    public var manufacturer: String
    public var model: String
    public var firmwareVersion: String
    public var supportsIdentify: Bool
    public var services: [ServiceDescription]
    /// For a bridge: the accessories behind it (each without bridged accessories of its own).
    public var bridgedAccessories: [AccessoryDescription]

    public init(
        id: AccessoryID = .random(),
        name: String,
        category: Int = 1,
        manufacturer: String = "",
        model: String = "",
        firmwareVersion: String = "1.0",
        supportsIdentify: Bool = true,
        services: [ServiceDescription],
        bridgedAccessories: [AccessoryDescription] = []
    ) {
        self.id = id
        self.name = name
        self.category = category
        self.manufacturer = manufacturer
        self.model = model
        self.firmwareVersion = firmwareVersion
        self.supportsIdentify = supportsIdentify
        self.services = services
        self.bridgedAccessories = bridgedAccessories
    }
}

/// An advertised service.
public struct ServiceDescription: Hashable, Sendable {
    public var id: ServiceID
    /// A HAP type UUID; standard types must carry their required characteristics.
    public var type: String
    /// Defaults to the accessory's name.
    public var name: String?
    public var isPrimary: Bool
    public var isUserInteractive: Bool
    /// Indexes into the accessory's `services`.
    public var linkedServices: [Int]
    public var characteristics: [CharacteristicDescription]

    public init(
        id: ServiceID = .random(),
        type: String,
        name: String? = nil,
        isPrimary: Bool = false,
        isUserInteractive: Bool = true,
        linkedServices: [Int] = [],
        characteristics: [CharacteristicDescription]
    ) {
        self.id = id
        self.type = type
        self.name = name
        self.isPrimary = isPrimary
        self.isUserInteractive = isUserInteractive
        self.linkedServices = linkedServices
        self.characteristics = characteristics
    }
}

/// An advertised characteristic. Standard types may omit properties and metadata (the catalog's are
/// used); custom types must declare both.
public struct CharacteristicDescription: Hashable, Sendable {
    public var id: CharacteristicID
    public var type: String
    public var properties: CharacteristicProperties?
    public var metadata: CharacteristicMetadata?
    public var value: CharacteristicValue?

    public init(
        id: CharacteristicID = .random(),
        type: String,
        properties: CharacteristicProperties? = nil,
        metadata: CharacteristicMetadata? = nil,
        value: CharacteristicValue? = nil
    ) {
        self.id = id
        self.type = type
        self.properties = properties
        self.metadata = metadata
        self.value = value
    }
}
