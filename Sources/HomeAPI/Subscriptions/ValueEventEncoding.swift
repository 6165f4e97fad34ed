import HomeProto
import HomeService

/// The most frequent event, `CharacteristicValueUpdated`, encoded by hand (see ``ProtoWriter``): built
/// as messages and encoded by swift-protobuf it cost about 15,000 instructions, more than the rest
/// of its delivery to a subscriber; the bytes are the same (tested against
/// ``HomeAPI/eventMessage(_:own:payload:)`` and ``HomeAPI/valueUpdate(_:service:skipped:)``).
enum ValueEventEncoding {
    /// `home.v1.Event.characteristic_value_updated`.
    static let payloadField: UInt32 = 157

    static func encoded(_ change: HomeChange, service: ServiceID?, skipped: UInt64, own: Bool) -> [UInt8] {
        let event = change.event
        let valueLength = event.value.map(ProtoWriter.valueLength) ?? 0
        let updateLength =
            (event.object == nil ? 0 : ProtoWriter.idFieldLength)
            + (service == nil ? 0 : ProtoWriter.idFieldLength)
            + (event.container == nil ? 0 : ProtoWriter.idFieldLength)
            + (event.value == nil ? 0 : ProtoWriter.delimitedLength(valueLength))
            + (skipped == 0 ? 0 : ProtoWriter.varintFieldLength(skipped))
        let initiatorLength =
            switch change.initiator {
            case .account, .accessory: ProtoWriter.idFieldLength
            case .server: 2
            }
        let time = UInt64(bitPattern: change.time)
        let length =
            ProtoWriter.idFieldLength
            + (change.revision == 0 ? 0 : ProtoWriter.varintFieldLength(change.revision))
            + (time == 0 ? 0 : ProtoWriter.varintFieldLength(time))
            + ProtoWriter.delimitedLength(initiatorLength) + (own ? 2 : 0)
            + ProtoWriter.delimitedLength(updateLength, field: payloadField)
        return ProtoWriter.message(length: length) { writer in
            writer.identifier(1, change.home.raw)
            if change.revision != 0 { writer.varint(2, change.revision) }
            if time != 0 { writer.varint(3, time) }
            writer.delimited(4, length: initiatorLength) { initiator in
                switch change.initiator {
                case .account(let account): initiator.identifier(4, UserID(account: account, home: change.home).raw)
                case .accessory(let accessory): initiator.identifier(2, accessory.raw)
                case .server: initiator.varint(3, 1)
                }
            }
            if own { writer.varint(5, 1) }
            writer.delimited(payloadField, length: updateLength) { update in
                if let characteristic = event.object { update.identifier(1, characteristic) }
                if let service { update.identifier(2, service.raw) }
                if let accessory = event.container { update.identifier(3, accessory) }
                if let value = event.value { update.delimited(4, length: valueLength) { $0.value(value) } }
                if skipped != 0 { update.varint(5, skipped) }
            }
        }
    }
}
