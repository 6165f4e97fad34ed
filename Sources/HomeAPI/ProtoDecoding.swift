import Foundation
public import HomeProto
public import HomeService

/// Reading request fields into domain values; each failure names its field.
enum ProtoDecoding {
    /// A 16-byte identifier from `field`.
    static func id<Kind>(_ data: Data, _ field: String) throws(APIFailure) -> ID<Kind> {
        guard let raw = UniqueIdentifier(bytes: data) else {
            throw .invalid(field, "\(field) must be a 16-byte identifier, not \(data.count) bytes")
        }
        return ID(raw)
    }

    /// An identifier the client may leave empty for the server to assign.
    static func optionalID<Kind>(_ data: Data, _ field: String) throws(APIFailure) -> ID<Kind> {
        data.isEmpty ? .random() : try id(data, field)
    }

    static func value(
        _ message: Home_V1_CharacteristicValue,
        _ field: String
    ) throws(APIFailure)
        -> CharacteristicValue
    {
        try CharacteristicValue(message, field: field)
    }

    static func recurrence(_ message: Home_V1_Recurrence, _ field: String) throws(APIFailure) -> TriggerRecurrence {
        let unit: TriggerRecurrence.Unit
        switch message.unit {
        case .second: unit = .second
        case .minute: unit = .minute
        case .hour: unit = .hour
        case .day: unit = .day
        case .week: unit = .week
        case .unspecified, .UNRECOGNIZED:
            throw .invalid("\(field).unit", "\(field).unit must be SECOND, MINUTE, HOUR, DAY or WEEK")
        }
        return TriggerRecurrence(message.count, unit)
    }

    static func format(
        _ format: Home_V1_CharacteristicFormat,
        _ field: String
    ) throws(APIFailure)
        -> CharacteristicFormat
    {
        switch format {
        case .bool: return .bool
        case .uint8: return .uint8
        case .uint16: return .uint16
        case .uint32: return .uint32
        case .uint64: return .uint64
        case .int: return .int
        case .float: return .float
        case .string: return .string
        case .tlv8: return .tlv8
        case .data: return .data
        case .unspecified, .UNRECOGNIZED: throw .invalid(field, "\(field) must name a format")
        }
    }

    static func metadata(
        _ message: Home_V1_CharacteristicMetadata,
        _ field: String
    ) throws(APIFailure)
        -> CharacteristicMetadata
    {
        CharacteristicMetadata(
            format: try format(message.format, "\(field).format"),
            units: message.units.isEmpty ? nil : message.units,
            minimumValue: message.hasMinimumValue ? message.minimumValue : nil,
            maximumValue: message.hasMaximumValue ? message.maximumValue : nil,
            stepValue: message.hasStepValue ? message.stepValue : nil,
            maxLength: message.hasMaxLength ? Int(message.maxLength) : nil,
            minLength: message.hasMinLength ? Int(message.minLength) : nil,
            validValues: message.validValues.isEmpty ? nil : message.validValues,
            manufacturerDescription: message.manufacturerDescription.isEmpty ? nil : message.manufacturerDescription
        )
    }

    static func properties(_ message: Home_V1_CharacteristicProperties) -> CharacteristicProperties {
        var properties: CharacteristicProperties = []
        if message.readable { properties.insert(.readable) }
        if message.writable { properties.insert(.writable) }
        if message.supportsEventNotification { properties.insert(.supportsEventNotification) }
        if message.hidden { properties.insert(.hidden) }
        if message.requiresAuthorizationData { properties.insert(.requiresAuthorizationData) }
        return properties
    }

    static func accessory(
        _ message: Home_V1_AccessoryDescription,
        _ field: String
    ) throws(APIFailure)
        -> AccessoryDescription
    {
        var services: [ServiceDescription] = []
        for (index, service) in message.services.enumerated() {
            let path = "\(field).services[\(index)]"
            var characteristics: [CharacteristicDescription] = []
            for (position, characteristic) in service.characteristics.enumerated() {
                let at = "\(path).characteristics[\(position)]"
                characteristics.append(
                    CharacteristicDescription(
                        id: try optionalID(characteristic.id, "\(at).id"),
                        type: characteristic.type,
                        properties: characteristic.hasProperties ? properties(characteristic.properties) : nil,
                        metadata: characteristic.hasMetadata
                            ? try metadata(characteristic.metadata, "\(at).metadata") : nil,
                        value: characteristic.hasValue ? try value(characteristic.value, "\(at).value") : nil
                    )
                )
            }
            services.append(
                ServiceDescription(
                    id: try optionalID(service.id, "\(path).id"),
                    type: service.type,
                    name: service.name.isEmpty ? nil : service.name,
                    isPrimary: service.primary,
                    isUserInteractive: service.userInteractive,
                    linkedServices: service.linkedServices.map(Int.init),
                    characteristics: characteristics
                )
            )
        }
        var bridged: [AccessoryDescription] = []
        for (index, child) in message.bridgedAccessories.enumerated() {
            bridged.append(try accessory(child, "\(field).bridged_accessories[\(index)]"))
        }
        return AccessoryDescription(
            id: try optionalID(message.id, "\(field).id"),
            name: message.name,
            category: Int(message.category),
            manufacturer: message.manufacturer,
            model: message.model,
            firmwareVersion: message.firmwareVersion.isEmpty ? "1.0" : message.firmwareVersion,
            supportsIdentify: message.supportsIdentify,
            services: services,
            bridgedAccessories: bridged
        )
    }
}

// Public, for servers that embed the store behind another protocol (bench/grpc).
extension CharacteristicValue {
    /// The value a request carries in `field`.
    /// - Throws: 27 when no value is set. (Whether the characteristic takes the value is the
    ///   store's check, against its format and metadata.)
    public init(_ message: Home_V1_CharacteristicValue, field: String) throws(APIFailure) {
        switch message.kind {
        case .boolValue(let value): self = .bool(value)
        case .signedValue(let value): self = .int(value)
        case .unsignedValue(let value): self = .integer(value)
        case .floatValue(let value): self = .float(value)
        case .stringValue(let value): self = .string(value)
        case .dataValue(let value): self = .data([UInt8](value))
        case nil: throw .invalid(field, "\(field) has no value set", .missingParameter)
        }
    }
}
