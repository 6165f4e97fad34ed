import Testing

@testable import HomeService

@Suite struct StandardCatalogTests {
    @Test func holdsEveryTypeOfTheCatalog() {
        #expect(StandardCatalog.characteristicTypes.count == 114)
        #expect(StandardCatalog.serviceTypes.count == 38)
        #expect(Set(StandardCatalog.characteristicTypes.map(\.shortID)).count == 114)
        #expect(Set(StandardCatalog.serviceTypes.map(\.shortID)).count == 38)
    }

    @Test func everyServiceNamesKnownCharacteristics() {
        for service in StandardCatalog.serviceTypes {
            #expect(!service.required.isEmpty, "\(service.name) has no required characteristic")
            for id in service.required + service.optional {
                #expect(StandardCatalog.characteristicType(uuid: HAPUUID.full(id)) != nil, "\(service.name): \(id)")
            }
        }
    }

    @Test func characteristicsCarryTheirCatalogMetadata() throws {
        let brightness = try #require(StandardCatalog.characteristicType(uuid: "00000008-0000-1000-8000-0026BB765291"))
        #expect(brightness.name == "Brightness")
        #expect(brightness.properties == [.readable, .writable, .supportsEventNotification])
        #expect(
            brightness.metadata
                == CharacteristicMetadata(
                    format: .int,
                    units: "percentage",
                    minimumValue: 0,
                    maximumValue: 100,
                    stepValue: 1
                )
        )
        let lock = try #require(StandardCatalog.characteristicType(uuid: HAPUUID.full(0x1E)))
        #expect(lock.homeKitName == "TargetLockMechanismState")
        #expect(lock.metadata.validValues == [0, 1])
        // HAP-CATALOG.md: Current Temperature follows HAP-NodeJS, -270...100 step 0.1.
        let temperature = try #require(StandardCatalog.characteristicType(uuid: HAPUUID.full(0x11)))
        #expect(temperature.metadata.minimumValue == -270)
        #expect(temperature.metadata.maximumValue == 100)
        #expect(temperature.metadata.stepValue == 0.1)
        #expect(temperature.properties == [.readable, .supportsEventNotification])
        let name = try #require(StandardCatalog.characteristicType(uuid: HAPUUID.full(0x23)))
        #expect(name.metadata.format == .string && name.metadata.maxLength == 64)
    }

    @Test func uuidsConvertBothWays() {
        #expect(HAPUUID.full(0x43) == "00000043-0000-1000-8000-0026BB765291")
        #expect(HAPUUID.shortID(of: "00000043-0000-1000-8000-0026bb765291") == 0x43)
        #expect(HAPUUID.shortID(of: "D1A9C2E0-1C2B-4F1E-9D7A-0C3B5E6F7A8B") == nil)
        #expect(StandardCatalog.serviceType(uuid: HAPUUID.full(0x43))?.name == "Lightbulb")
    }

    @Test func standardServiceMissingARequiredCharacteristicIsRefused() {
        do {
            try StandardCatalog.checkService(uuid: HAPUUID.full(0x43), characteristicUUIDs: [HAPUUID.full(0x8)])
            Issue.record("a Lightbulb without On was accepted")
        } catch {
            #expect(error.code == .incompatibleAccessory)
            #expect(error.message.contains("Lightbulb") && error.message.contains("On (00000025-"))
        }
    }

    @Test func completeStandardAndCustomServicesPass() throws {
        try StandardCatalog.checkService(
            uuid: HAPUUID.full(0x43),
            characteristicUUIDs: [HAPUUID.full(0x25), HAPUUID.full(0x8)]
        )
        let thermostat = try #require(StandardCatalog.serviceType(uuid: HAPUUID.full(0x4A)))
        try StandardCatalog.checkService(
            uuid: thermostat.uuid,
            characteristicUUIDs: thermostat.required.map(HAPUUID.full)
        )
        // Custom services carry whatever they declare.
        try StandardCatalog.checkService(uuid: "D1A9C2E0-1C2B-4F1E-9D7A-0C3B5E6F7A8B", characteristicUUIDs: [])
    }
}
