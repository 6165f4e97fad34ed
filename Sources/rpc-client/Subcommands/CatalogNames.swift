import ArgumentParser
import Foundation

import struct HomeService.ServiceType
import enum HomeService.StandardCatalog

/// Standard service and characteristic types as a person names them: the catalog's name, with case,
/// spaces and hyphens ignored ("lightbulb", "temperature-sensor", "current temperature"), or the
/// type's UUID.
enum CatalogNames {
    /// A characteristic type's catalog name ("Brightness"), or its UUID when it is a custom type.
    static func characteristicName(_ uuid: String) -> String {
        StandardCatalog.characteristicType(uuid: uuid)?.name ?? uuid
    }

    /// A service type's catalog name ("Lightbulb"), its UUID when it is a custom type, "" for none.
    static func serviceName(_ uuid: String) -> String {
        StandardCatalog.serviceType(uuid: uuid)?.name ?? uuid
    }

    /// The standard service type a person named, by catalog name or UUID.
    /// - Throws: a usage error listing the names, for anything else.
    static func serviceType(_ text: String) throws -> ServiceType {
        if let type = StandardCatalog.serviceType(uuid: text) { return type }
        if let type = StandardCatalog.serviceTypes.first(where: { key($0.name) == key(text) }) { return type }
        let names = StandardCatalog.serviceTypes.map(\.name).joined(separator: ", ")
        throw ValidationError("unknown service type \(text); one of (case, spaces and hyphens ignored): \(names)")
    }

    /// A service type's UUID from its catalog name or UUID; a custom type's UUID as typed.
    static func serviceTypeUUID(_ text: String) throws -> String {
        UUID(uuidString: text) != nil ? text.uppercased() : try serviceType(text).uuid
    }

    /// Whether `text` names the characteristic type `uuid`: its catalog name, or the UUID itself.
    static func characteristic(_ uuid: String, isNamed text: String) -> Bool {
        if uuid.caseInsensitiveCompare(text) == .orderedSame { return true }
        guard let type = StandardCatalog.characteristicType(uuid: uuid) else { return false }
        return key(type.name) == key(text)
    }

    /// Names compare without case, spaces or hyphens ("Current Temperature", "current-temperature").
    private static func key(_ name: String) -> String {
        name.lowercased().filter { $0 != " " && $0 != "-" }
    }
}
