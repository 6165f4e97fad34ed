import Foundation
import HomeProto
import HomeService
import RPCServices

/// A whole home's `home.v1.Home` encoding, its accessories written by hand (``ProtoWriter``), and
/// the messages that carry it: the largest answers (`GetHome`, a subscription's snapshot, resync or
/// added home) held the event loop about 8.5 µs an accessory through swift-protobuf, which built a
/// message object for every service and characteristic and measured each nested message again at
/// every level above it (170 ms for 20,000 accessories, with every other client waiting).
///
/// The home's other fields go through swift-protobuf (``ProtoEncoding/home(_:caller:includingAccessories:)``),
/// and so does each characteristic kind's type, properties and metadata, once per kind: a home has a
/// few dozen kinds and thousands of characteristics. Everything is measured first, then written once
/// into an array of that size. The bytes are those swift-protobuf writes for the whole message (a
/// test compares them).
struct HomeEncoder {
    private let view: HomeStore.HomeView
    /// Fields 4–6 of `home.v1.Characteristic` (type, properties, metadata) for each kind.
    private var kindFields: [ObjectIdentifier: [UInt8]] = [:]
    /// The lengths of every accessory, service and characteristic message, in the order they are
    /// written: measured once, read back while writing.
    private var accessoryLengths: [Int] = []
    private var serviceLengths: [Int] = []
    private var characteristicLengths: [Int] = []

    private init(view: HomeStore.HomeView) {
        self.view = view
    }

    /// The home as ``ProtoEncoding/home(_:caller:includingAccessories:)`` with its accessories would
    /// encode it, inside `carriers` (outermost first; none: the home alone).
    static func encode(
        _ view: HomeStore.HomeView,
        caller: AccountID,
        in carriers: [ProtoWriter.Carrier] = []
    ) -> [UInt8] {
        let rest = ProtoEncoding.home(view, caller: caller, includingAccessories: false)
        // Fields in number order, as swift-protobuf writes them: 1–7, the accessories (8), 9 on.
        var head = Home_V1_Home()
        head.id = rest.id
        head.name = rest.name
        head.primary = rest.primary
        head.role = rest.role
        head.roomForEntireHome = rest.roomForEntireHome
        head.rooms = rest.rooms
        head.zones = rest.zones
        var tail = rest
        tail.id = Data()
        tail.name = ""
        tail.primary = false
        tail.role = .unspecified
        tail.clearRoomForEntireHome()
        tail.rooms = []
        tail.zones = []
        let headBytes = (try? head.encodedBytes()) ?? []
        let tailBytes = (try? tail.encodedBytes()) ?? []

        var encoder = HomeEncoder(view: view)
        let length = headBytes.count + encoder.measureAccessories() + tailBytes.count
        return ProtoWriter.carried(length, in: carriers) { bytes in
            bytes += headBytes
            encoder.writeAccessories(into: &bytes)
            bytes += tailBytes
        }
    }

    // MARK: Measuring

    /// Measures every accessory; returns the bytes of their fields (field 8 of `home.v1.Home`).
    private mutating func measureAccessories() -> Int {
        accessoryLengths.reserveCapacity(view.accessories.count)
        var total = 0
        for state in view.accessories {
            let length = measure(state)
            accessoryLengths.append(length)
            total += ProtoWriter.delimitedLength(length, field: 8)
        }
        return total
    }

    private mutating func measure(_ state: HomeStore.AccessoryState) -> Int {
        let accessory = state.accessory
        var length = 2 * ProtoWriter.idFieldLength
        length += ProtoWriter.stringFieldLength(accessory.name, field: 2)
        if accessory.category != 0 { length += ProtoWriter.varintFieldLength(Self.category(accessory), field: 4) }
        length += ProtoWriter.stringFieldLength(accessory.manufacturer, field: 5)
        length += ProtoWriter.stringFieldLength(accessory.model, field: 6)
        length += ProtoWriter.stringFieldLength(accessory.firmwareVersion, field: 7)
        if accessory.isReachable { length += 2 }
        if accessory.isBlocked { length += 2 }
        if accessory.bridge != nil { length += ProtoWriter.idFieldLength }
        length += accessory.bridgedAccessories.count * ProtoWriter.idFieldLength
        if accessory.supportsIdentify { length += 2 }
        for service in state.services { length += ProtoWriter.delimitedLength(measure(service), field: 13) }
        if accessory.isBridged { length += 2 }
        return length
    }

    private mutating func measure(_ state: HomeStore.ServiceState) -> Int {
        let service = state.service
        var length = 2 * ProtoWriter.idFieldLength
        length += ProtoWriter.stringFieldLength(service.type, field: 3)
        length += ProtoWriter.stringFieldLength(service.name, field: 4)
        if service.isPrimary { length += 2 }
        if service.isUserInteractive { length += 2 }
        length += ProtoWriter.stringFieldLength(service.associatedServiceType ?? "", field: 7)
        length += service.linkedServices.count * ProtoWriter.idFieldLength
        for characteristic in state.characteristics {
            length += ProtoWriter.delimitedLength(measure(characteristic), field: 9)
        }
        serviceLengths.append(length)
        return length
    }

    private mutating func measure(_ state: HomeStore.CharacteristicState) -> Int {
        var length = 3 * ProtoWriter.idFieldLength + kindFields(of: state.characteristic.kind).count
        if let value = state.entry.value {
            length += ProtoWriter.delimitedLength(ProtoWriter.valueLength(value), field: 7)
        }
        if state.entry.updatedAt != 0 {
            length += ProtoWriter.varintFieldLength(UInt64(bitPattern: state.entry.updatedAt), field: 8)
        }
        if state.notificationEnabled { length += 2 }
        characteristicLengths.append(length)
        return length
    }

    /// The kind's fields, encoded the first time the kind is met.
    private mutating func kindFields(of kind: CharacteristicKind) -> [UInt8] {
        if let known = kindFields[ObjectIdentifier(kind)] { return known }
        var message = Home_V1_Characteristic()
        message.type = kind.type
        message.properties = ProtoEncoding.properties(kind.properties)
        message.metadata = ProtoEncoding.metadata(kind.metadata)
        let fields = (try? message.encodedBytes()) ?? []
        kindFields[ObjectIdentifier(kind)] = fields
        return fields
    }

    // MARK: Writing (in the order measured)

    private func writeAccessories(into bytes: inout [UInt8]) {
        var services = serviceLengths.makeIterator()
        var characteristics = characteristicLengths.makeIterator()
        for (state, length) in zip(view.accessories, accessoryLengths) {
            bytes.append(addingCapacity: ProtoWriter.delimitedLength(length, field: 8)) { output in
                output.delimited(8, length: length) { writer in
                    write(state, into: &writer, services: &services, characteristics: &characteristics)
                }
            }
        }
    }

    private func write(
        _ state: HomeStore.AccessoryState,
        into writer: inout OutputSpan<UInt8>,
        services: inout IndexingIterator<[Int]>,
        characteristics: inout IndexingIterator<[Int]>
    ) {
        let accessory = state.accessory
        writer.identifier(1, accessory.id.raw)
        writer.string(2, accessory.name)
        writer.identifier(3, accessory.room.raw)
        if accessory.category != 0 { writer.varint(4, Self.category(accessory)) }
        writer.string(5, accessory.manufacturer)
        writer.string(6, accessory.model)
        writer.string(7, accessory.firmwareVersion)
        if accessory.isReachable { writer.varint(8, 1) }
        if accessory.isBlocked { writer.varint(9, 1) }
        if let bridge = accessory.bridge { writer.identifier(10, bridge.raw) }
        for bridged in accessory.bridgedAccessories { writer.identifier(11, bridged.raw) }
        if accessory.supportsIdentify { writer.varint(12, 1) }
        for serviceState in state.services {
            writer.delimited(13, length: services.next()!) { serviceWriter in
                write(serviceState, into: &serviceWriter, characteristics: &characteristics)
            }
        }
        if accessory.isBridged { writer.varint(14, 1) }
    }

    private func write(
        _ state: HomeStore.ServiceState,
        into writer: inout OutputSpan<UInt8>,
        characteristics: inout IndexingIterator<[Int]>
    ) {
        let service = state.service
        writer.identifier(1, service.id.raw)
        writer.identifier(2, service.accessory.raw)
        writer.string(3, service.type)
        writer.string(4, service.name)
        if service.isPrimary { writer.varint(5, 1) }
        if service.isUserInteractive { writer.varint(6, 1) }
        writer.string(7, service.associatedServiceType ?? "")
        for linked in service.linkedServices { writer.identifier(8, linked.raw) }
        for characteristic in state.characteristics {
            writer.delimited(9, length: characteristics.next()!) { characteristicWriter in
                write(characteristic, into: &characteristicWriter)
            }
        }
    }

    private func write(_ state: HomeStore.CharacteristicState, into writer: inout OutputSpan<UInt8>) {
        let characteristic = state.characteristic
        writer.identifier(1, characteristic.id.raw)
        writer.identifier(2, characteristic.service.raw)
        writer.identifier(3, characteristic.accessory.raw)
        for byte in kindFields[ObjectIdentifier(characteristic.kind)]! { writer.append(byte) }
        if let value = state.entry.value {
            writer.delimited(7, length: ProtoWriter.valueLength(value)) { valueWriter in valueWriter.value(value) }
        }
        if state.entry.updatedAt != 0 { writer.varint(8, UInt64(bitPattern: state.entry.updatedAt)) }
        if state.notificationEnabled { writer.varint(9, 1) }
    }

    /// An `int32` field travels as its 64-bit sign extension.
    private static func category(_ accessory: Accessory) -> UInt64 {
        UInt64(bitPattern: Int64(Int32(clamping: accessory.category)))
    }
}
