/// Which generic services may say what they really control (HomeKit's `updateAssociatedServiceType`).
public enum ServiceAssociationRules {
    static let outlet: UInt32 = 0x47
    static let switchService: UInt32 = 0x49
    static let contactSensor: UInt32 = 0x80
    static let powerState: UInt32 = 0x25
    /// Door, Garage Door Opener, Window, Window Covering.
    static let contactSensorTargets: Set<UInt32> = [0x81, 0x41, 0x8B, 0x8C]

    /// - Throws: 62 unless an Outlet or Switch is associated with a standard type that has Power
    ///   State, or a Contact Sensor with a Door, Garage Door Opener, Window or Window Covering.
    public static func check(service: String, associatedType: String) throws(HomeServiceError) {
        let source = HAPUUID.shortID(of: service)
        let target = StandardCatalog.serviceType(uuid: associatedType)
        let allowed: Bool =
            switch source {
            case outlet, switchService:
                target.map { $0.required.contains(powerState) || $0.optional.contains(powerState) } ?? false
            case contactSensor:
                target.map { contactSensorTargets.contains($0.shortID) } ?? false
            default:
                false
            }
        guard allowed else {
            let sourceName = StandardCatalog.serviceType(uuid: service)?.name ?? service
            throw HomeServiceError(
                .invalidAssociatedServiceType,
                "a \(sourceName) service cannot be associated with \(target?.name ?? associatedType)"
            )
        }
    }
}
