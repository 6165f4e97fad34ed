/// The standard service and characteristic types (generated from HAP-CATALOG.md by
/// scripts/generate-catalog.py), with lookups and the check an advertised service must pass.
public enum StandardCatalog {
    public static let characteristicTypes: [CharacteristicType] = generatedCharacteristicTypes
    public static let serviceTypes: [ServiceType] = generatedServiceTypes

    private static let characteristicsByID = Dictionary(
        uniqueKeysWithValues: characteristicTypes.map { ($0.shortID, $0) }
    )
    private static let servicesByID = Dictionary(uniqueKeysWithValues: serviceTypes.map { ($0.shortID, $0) })

    /// The standard characteristic type with this UUID, or `nil` for a custom or unknown one.
    public static func characteristicType(uuid: String) -> CharacteristicType? {
        HAPUUID.shortID(of: uuid).flatMap { characteristicsByID[$0] }
    }

    /// The standard service type with this UUID, or `nil` for a custom or unknown one.
    public static func serviceType(uuid: String) -> ServiceType? {
        HAPUUID.shortID(of: uuid).flatMap { servicesByID[$0] }
    }

    /// Checks an advertised service: a standard service must carry each of its required
    /// characteristics. Custom services (any other UUID, including Apple-base ids this catalog does
    /// not know, which may come from a newer HAP revision) carry what their metadata declares.
    /// - Throws: ``HomeServiceError`` with 93 (IncompatibleAccessory) naming the first missing one.
    public static func checkService(uuid: String, characteristicUUIDs: [String]) throws(HomeServiceError) {
        guard let service = serviceType(uuid: uuid) else { return }
        let present = Set(characteristicUUIDs.compactMap(HAPUUID.shortID(of:)))
        for required in service.required where !present.contains(required) {
            let name = characteristicsByID[required]?.name ?? HAPUUID.full(required)
            throw HomeServiceError(
                .incompatibleAccessory,
                "service \(service.name) (\(service.uuid)) lacks its required characteristic \(name) (\(HAPUUID.full(required)))"
            )
        }
    }
}
