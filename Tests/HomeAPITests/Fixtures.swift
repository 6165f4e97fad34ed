import Foundation
import HomeClient
import HomeProto

/// Advertised accessories for the end-to-end tests.
enum Advertised {
    static let lightbulb = "00000043-0000-1000-8000-0026BB765291"
    static let on = "00000025-0000-1000-8000-0026BB765291"
    static let brightness = "00000008-0000-1000-8000-0026BB765291"
    static let outlet = "00000047-0000-1000-8000-0026BB765291"
    static let outletInUse = "00000026-0000-1000-8000-0026BB765291"
    static let temperatureSensor = "0000008A-0000-1000-8000-0026BB765291"
    static let currentTemperature = "00000011-0000-1000-8000-0026BB765291"
    static let windowCovering = "0000008C-0000-1000-8000-0026BB765291"
    static let currentPosition = "0000006D-0000-1000-8000-0026BB765291"
    static let positionState = "00000072-0000-1000-8000-0026BB765291"
    static let targetPosition = "0000007C-0000-1000-8000-0026BB765291"
    static let holdPosition = "0000006F-0000-1000-8000-0026BB765291"
    /// Custom (vendor) types, outside Apple's base UUID.
    static let settingsService = "5A1E0001-8F2D-4C7A-9B3E-6D0C1F2A3B4C"
    static let label = "5A1E0002-8F2D-4C7A-9B3E-6D0C1F2A3B4C"
    static let setpoint = "5A1E0003-8F2D-4C7A-9B3E-6D0C1F2A3B4C"

    static func characteristic(_ type: String, _ value: CharacteristicValue? = nil) -> Home_V1_CharacteristicDescription
    {
        var description = Home_V1_CharacteristicDescription()
        description.type = type
        if let value { description.value = value }
        return description
    }

    static func service(
        _ type: String,
        _ characteristics: [Home_V1_CharacteristicDescription]
    ) -> Home_V1_ServiceDescription {
        var service = Home_V1_ServiceDescription()
        service.type = type
        service.primary = true
        service.characteristics = characteristics
        return service
    }

    /// A dimmable bulb: On and Brightness.
    static func bulb(_ name: String) -> AccessoryDescription {
        var accessory = AccessoryDescription()
        accessory.name = name
        accessory.category = 5
        accessory.manufacturer = "Acme"
        accessory.model = "Bulb"
        accessory.supportsIdentify = true
        accessory.services = [
            service(lightbulb, [characteristic(on, .bool(false)), characteristic(brightness, .int(50))])
        ]
        return accessory
    }

    /// An outlet (to associate) and a temperature sensor (read-only) in one accessory.
    static func outletWithSensor(_ name: String) -> AccessoryDescription {
        var accessory = AccessoryDescription()
        accessory.name = name
        accessory.category = 7
        accessory.services = [
            service(outlet, [characteristic(on, .bool(false)), characteristic(outletInUse, .bool(false))]),
            service(temperatureSensor, [characteristic(currentTemperature, .float(20))]),
        ]
        return accessory
    }

    /// A window covering with Hold Position (write-only, without events), and a vendor service with a
    /// "Label" (text of 4 to 8 bytes) and a "Setpoint" (0 to 10 in steps of 0.5), both writable.
    static func blind(_ name: String) -> AccessoryDescription {
        var accessory = AccessoryDescription()
        accessory.name = name
        accessory.category = 14
        accessory.services = [
            service(
                windowCovering,
                [
                    characteristic(currentPosition, .int(0)), characteristic(positionState, .int(2)),
                    characteristic(targetPosition, .int(0)), characteristic(holdPosition),
                ]
            ),
            service(
                settingsService,
                [
                    custom(label, .string("Blind")) {
                        $0.format = .string
                        $0.minLength = 4
                        $0.maxLength = 8
                    },
                    custom(setpoint, .float(5)) {
                        $0.format = .float
                        $0.minimumValue = 0
                        $0.maximumValue = 10
                        $0.stepValue = 0.5
                    },
                ]
            ),
        ]
        accessory.services[1].primary = false
        return accessory
    }

    /// A readable, writable custom characteristic with events and the given metadata.
    static func custom(
        _ type: String,
        _ value: CharacteristicValue,
        metadata: (inout Home_V1_CharacteristicMetadata) -> Void
    ) -> Home_V1_CharacteristicDescription {
        var description = characteristic(type, value)
        description.properties.readable = true
        description.properties.writable = true
        description.properties.supportsEventNotification = true
        metadata(&description.metadata)
        return description
    }

    static func bridge(_ name: String, behind: [AccessoryDescription]) -> AccessoryDescription {
        var accessory = AccessoryDescription()
        accessory.name = name
        accessory.category = 2
        accessory.bridgedAccessories = behind
        return accessory
    }
}

extension Accessory {
    /// The characteristic of `type` on this accessory.
    func characteristic(_ type: String) -> Characteristic {
        services.flatMap(\.characteristics).first { $0.type == type }!
    }
}

/// Simulated accessories for the end-to-end tests: they advertise over one shared link connection
/// and are paired into homes through the real pairing path.
final class Simulators: Sendable {
    static let setupCode = "031-45-154"
    let link: AccessoryLinkClient

    init(_ server: HomedProcess) async throws {
        link = try await AccessoryLinkClient.connect(to: server.endpoint)
    }

    /// Advertises `description` and pairs it into `home`; returns the simulator (serving its link)
    /// and the accessories added, the bridge first.
    func pair(
        _ description: AccessoryDescription,
        into home: HomeHandle
    ) async throws -> (simulator: SimulatedAccessory, accessories: [Accessory]) {
        let simulator = SimulatedAccessory(description, setupCode: Self.setupCode, link: link)
        try await simulator.start()
        let added = try await home.addAccessory(await simulator.id, setupCode: Self.setupCode)
        _ = await simulator.paired()
        return (simulator, added)
    }

    func close() async {
        await link.close()
    }
}

extension Date {
    init(milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
