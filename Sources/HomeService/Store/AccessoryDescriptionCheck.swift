/// Checks an advertised accessory before anything of it is added: identifiers, names, the catalog,
/// characteristic metadata and initial values.
struct AccessoryDescriptionCheck {
    let store: HomeStore

    /// HAP's limits: 150 accessories behind a bridge, 100 services per accessory and 100
    /// characteristics per service. Types are UUIDs (36 characters) or short HAP forms.
    static let maximumBridgedAccessories = 150
    static let maximumServices = 100
    static let maximumCharacteristics = 100
    static let maximumValidValues = 256
    static let maximumTypeLength = 36

    func check(_ description: AccessoryDescription) throws(HomeServiceError) {
        var seen: Set<UniqueIdentifier> = []
        try checkAccessory(description, bridged: false, seen: &seen)
        for bridged in description.bridgedAccessories {
            try checkAccessory(bridged, bridged: true, seen: &seen)
        }
    }

    /// Properties and metadata of an advertised characteristic: declared ones, else the catalog's;
    /// `nil` when neither exists (a custom type that declared nothing).
    static func resolved(
        _ description: CharacteristicDescription
    ) -> (CharacteristicProperties, CharacteristicMetadata)? {
        let standard = StandardCatalog.characteristicType(uuid: description.type)
        guard let properties = description.properties ?? standard?.properties,
            let metadata = description.metadata ?? standard?.metadata
        else { return nil }
        return (properties, metadata)
    }

    private func checkAccessory(
        _ accessory: AccessoryDescription,
        bridged: Bool,
        seen: inout Set<UniqueIdentifier>
    ) throws(HomeServiceError) {
        if store.accessories[accessory.id] != nil {
            throw HomeServiceError(
                .objectAlreadyAssociatedToHome,
                "accessory \"\(accessory.name)\" (\(accessory.id)) is already in a home"
            )
        }
        try unique(accessory.id.raw, "accessory", &seen)
        if bridged && !accessory.bridgedAccessories.isEmpty {
            throw HomeServiceError(
                .invalidParameter,
                "bridged accessory \"\(accessory.name)\" cannot have accessories behind it"
            )
        }
        try NameRules.validate(accessory.name, kind: "accessory")
        try TextRules.checkLength(accessory.manufacturer, of: "manufacturer of \"\(accessory.name)\"")
        try TextRules.checkLength(accessory.model, of: "model of \"\(accessory.name)\"")
        try TextRules.checkLength(accessory.firmwareVersion, of: "firmware version of \"\(accessory.name)\"")
        try Self.checkCount(accessory.bridgedAccessories.count, Self.maximumBridgedAccessories, "bridged accessories")
        try Self.checkCount(accessory.services.count, Self.maximumServices, "services of \"\(accessory.name)\"")
        for service in accessory.services {
            try TextRules.checkLength(service.type, of: "service type", maximum: Self.maximumTypeLength)
            try Self.checkCount(
                service.characteristics.count,
                Self.maximumCharacteristics,
                "characteristics of a service of \"\(accessory.name)\""
            )
            try Self.checkCount(service.linkedServices.count, Self.maximumServices, "linked services")
            try unique(service.id.raw, "service", &seen)
            guard store.services[service.id] == nil else {
                throw HomeServiceError(.alreadyExists, "service \(service.id) of \"\(accessory.name)\" already exists")
            }
            if let name = service.name { try NameRules.validate(name, kind: "service") }
            if let link = service.linkedServices.first(where: { !accessory.services.indices.contains($0) }) {
                throw HomeServiceError(
                    .invalidParameter,
                    "service \(service.id) of \"\(accessory.name)\" links to service #\(link), which it lacks"
                )
            }
            try StandardCatalog.checkService(
                uuid: service.type,
                characteristicUUIDs: service.characteristics.map(\.type)
            )
            for characteristic in service.characteristics {
                try checkCharacteristic(characteristic, of: accessory, &seen)
            }
        }
    }

    private func checkCharacteristic(
        _ characteristic: CharacteristicDescription,
        of accessory: AccessoryDescription,
        _ seen: inout Set<UniqueIdentifier>
    ) throws(HomeServiceError) {
        try unique(characteristic.id.raw, "characteristic", &seen)
        try TextRules.checkLength(characteristic.type, of: "characteristic type", maximum: Self.maximumTypeLength)
        if let metadata = characteristic.metadata {
            try TextRules.checkLength(metadata.units ?? "", of: "characteristic units")
            try TextRules.checkLength(
                metadata.manufacturerDescription ?? "",
                of: "characteristic description",
                maximum: TextRules.maximumDescriptionLength
            )
            try Self.checkCount(metadata.validValues?.count ?? 0, Self.maximumValidValues, "valid values")
        }
        guard store.characteristics[characteristic.id] == nil else {
            throw HomeServiceError(.alreadyExists, "characteristic \(characteristic.id) already exists")
        }
        guard let (_, metadata) = Self.resolved(characteristic) else {
            throw HomeServiceError(
                .missingParameter,
                "custom characteristic \(characteristic.type) of \"\(accessory.name)\" must declare its properties and metadata"
            )
        }
        if let value = characteristic.value {
            let name = StandardCatalog.characteristicType(uuid: characteristic.type)?.name ?? characteristic.type
            try ValueRules.validate(value, against: metadata, characteristic: name)
        }
    }

    /// - Throws: 49 for more than `maximum` items.
    private static func checkCount(
        _ count: Int,
        _ maximum: Int,
        _ what: @autoclosure () -> String
    )
        throws(HomeServiceError)
    {
        guard count > maximum else { return }
        throw HomeServiceError(.maximumObjectLimitReached, "\(count) \(what()) is more than the \(maximum) allowed")
    }

    private func unique(
        _ id: UniqueIdentifier,
        _ kind: String,
        _ seen: inout Set<UniqueIdentifier>
    ) throws(HomeServiceError) {
        guard seen.insert(id).inserted else {
            throw HomeServiceError(.alreadyExists, "\(kind) id \(id) appears twice in the accessory's description")
        }
    }
}
