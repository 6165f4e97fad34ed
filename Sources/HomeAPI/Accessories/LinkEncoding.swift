import HomeProto
import HomeService
import RPCServices
import SwiftProtobuf

/// The accessory face's messages built from the model.
enum LinkEncoding {
    /// An advertised description with every id filled in, as the accessory gets it back.
    static func description(_ accessory: AccessoryDescription) -> Home_V1_AccessoryDescription {
        var message = Home_V1_AccessoryDescription()
        message.id = ProtoEncoding.data(accessory.id)
        message.name = accessory.name
        message.category = Int32(clamping: accessory.category)
        message.manufacturer = accessory.manufacturer
        message.model = accessory.model
        message.firmwareVersion = accessory.firmwareVersion
        message.supportsIdentify = accessory.supportsIdentify
        message.services = accessory.services.map { service in
            var serviceMessage = Home_V1_ServiceDescription()
            serviceMessage.id = ProtoEncoding.data(service.id)
            serviceMessage.type = service.type
            serviceMessage.name = service.name ?? ""
            serviceMessage.primary = service.isPrimary
            serviceMessage.userInteractive = service.isUserInteractive
            serviceMessage.linkedServices = service.linkedServices.map { Int32(clamping: $0) }
            serviceMessage.characteristics = service.characteristics.map { characteristic in
                var characteristicMessage = Home_V1_CharacteristicDescription()
                characteristicMessage.id = ProtoEncoding.data(characteristic.id)
                characteristicMessage.type = characteristic.type
                if let properties = characteristic.properties {
                    characteristicMessage.properties = ProtoEncoding.properties(properties)
                }
                if let metadata = characteristic.metadata {
                    characteristicMessage.metadata = ProtoEncoding.metadata(metadata)
                }
                if let value = characteristic.value { characteristicMessage.value = ProtoEncoding.value(value) }
                return characteristicMessage
            }
            return serviceMessage
        }
        message.bridgedAccessories = accessory.bridgedAccessories.map(description)
        return message
    }

    /// What the browser shows of an advertised accessory.
    static func discovered(_ accessory: AccessoryDescription) -> Home_V1_DiscoveredAccessory {
        var message = Home_V1_DiscoveredAccessory()
        message.id = ProtoEncoding.data(accessory.id)
        message.name = accessory.name
        message.category = Int32(clamping: accessory.category)
        message.manufacturer = accessory.manufacturer
        message.model = accessory.model
        message.firmwareVersion = accessory.firmwareVersion
        // In order, each once; a set finds the repeats (a bridge may have 15,100 services, each of
        // its own type: comparing each with every earlier one held the loop for 790 ms at 14,850).
        var types: [String] = []
        var seen: Set<String> = []
        for service in accessory.services + accessory.bridgedAccessories.flatMap(\.services) {
            let type = service.type.uppercased()
            if seen.insert(type).inserted { types.append(type) }
        }
        message.serviceTypes = types
        message.bridgedAccessoryNames = accessory.bridgedAccessories.map(\.name)
        return message
    }

    static func bytes(_ message: Home_V1_LinkMessage) -> [UInt8] {
        (try? message.encodedBytes()) ?? []
    }

    static func bytes(_ message: Home_V1_BrowseEvent) -> [UInt8] {
        (try? message.encodedBytes()) ?? []
    }

    /// A `home.v1.LinkMessage` carrying a command, encoded by hand (see ``ProtoWriter``): the
    /// generated encoder sized the nested command at every level, about 6,400 instructions of a
    /// forwarded write's loop work.
    static func command(
        _ id: UInt64,
        for accessory: AccessoryID,
        _ action: AccessoryLinks.Action,
        timeoutMilliseconds: UInt32
    ) -> [UInt8] {
        let actionField: UInt32
        let actionLength: Int
        switch action {
        case .write(_, let value):
            actionField = 3
            actionLength = ProtoWriter.idFieldLength + ProtoWriter.delimitedLength(ProtoWriter.valueLength(value))
        case .read:
            actionField = 4
            actionLength = ProtoWriter.idFieldLength
        case .identify:
            actionField = 5
            actionLength = 0
        }
        let commandLength =
            (id == 0 ? 0 : ProtoWriter.varintFieldLength(id)) + ProtoWriter.idFieldLength
            + ProtoWriter.delimitedLength(actionLength)
            + (timeoutMilliseconds == 0 ? 0 : ProtoWriter.varintFieldLength(UInt64(timeoutMilliseconds)))
        return ProtoWriter.message(length: ProtoWriter.delimitedLength(commandLength, field: 4)) { writer in
            writer.delimited(4, length: commandLength) { command in
                if id != 0 { command.varint(1, id) }
                command.identifier(2, accessory.raw)
                command.delimited(actionField, length: actionLength) { body in
                    switch action {
                    case .write(let characteristic, let value):
                        body.identifier(1, characteristic.raw)
                        body.delimited(2, length: ProtoWriter.valueLength(value)) { $0.value(value) }
                    case .read(let characteristic):
                        body.identifier(1, characteristic.raw)
                    case .identify:
                        break
                    }
                }
                if timeoutMilliseconds != 0 { command.varint(6, UInt64(timeoutMilliseconds)) }
            }
        }
    }
}
