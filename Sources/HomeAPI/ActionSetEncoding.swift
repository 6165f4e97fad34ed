import HomeProto
import HomeService

/// `home.v1.ActionSet` written by hand (``ProtoWriter``): the answer to every change of an action
/// set's actions. For `UpdateActionTargetValue`, the store write the benchmarks measure, building
/// the set's message and swift-protobuf's encoding of it were a third of the call's work on the
/// event loop. The bytes are the generated encoder's (a test compares them).
enum ActionSetEncoding {
    /// The action set as ``ProtoEncoding/actionSet(_:)`` would encode it.
    static func encode(_ actionSet: ActionSet) -> [UInt8] { encode(actionSet, asField: nil) }

    /// The action set as the only field (1, `action_set`) of the answer to a change of its actions,
    /// written into `bytes` (empty; see ``ProtoWriter/message(length:into:_:)``).
    static func answer(_ actionSet: ActionSet, into bytes: consuming [UInt8] = []) -> [UInt8] {
        encode(actionSet, asField: 1, into: bytes)
    }

    /// The set's message, alone or as field `field` of an otherwise empty message, in one array
    /// of the final size (through ``ProtoWriter/carried(_:in:_:)``, an answer sized and wrote an
    /// empty carrier first: 250 instructions of the store write's 11,000).
    private static func encode(
        _ actionSet: ActionSet,
        asField field: UInt32?,
        into bytes: consuming [UInt8] = []
    ) -> [UInt8] {
        let type = UInt64(ProtoEncoding.actionSetType(actionSet.kind).rawValue)
        var length = ProtoWriter.idFieldLength + ProtoWriter.stringFieldLength(actionSet.name, field: 2)
        if type != 0 { length += ProtoWriter.varintFieldLength(type, field: 3) }
        for action in actionSet.actions { length += ProtoWriter.delimitedLength(Self.length(of: action), field: 4) }
        if actionSet.isExecuting { length += 2 }
        if let last = actionSet.lastExecutionDate {
            length += ProtoWriter.varintFieldLength(UInt64(bitPattern: last), field: 6)
        }
        // The fields the writer needs, taken out first: the closures captured the whole set, copied
        // through its value witness twice (130 instructions an answer).
        let (id, name, actions) = (actionSet.id.raw, actionSet.name, actionSet.actions)
        let (isExecuting, lastExecution) = (actionSet.isExecuting, actionSet.lastExecutionDate)
        func write(_ writer: inout OutputSpan<UInt8>) {
            writer.identifier(1, id)
            writer.string(2, name)
            if type != 0 { writer.varint(3, type) }
            for action in actions {
                writer.delimited(4, length: Self.length(of: action)) { actionWriter in
                    actionWriter.identifier(1, action.id.raw)
                    actionWriter.identifier(2, action.characteristic.raw)
                    actionWriter.delimited(3, length: ProtoWriter.valueLength(action.targetValue)) {
                        $0.value(action.targetValue)
                    }
                }
            }
            if isExecuting { writer.varint(5, 1) }
            if let lastExecution { writer.varint(6, UInt64(bitPattern: lastExecution)) }
        }
        guard let field else { return ProtoWriter.message(length: length, into: bytes) { write(&$0) } }
        return ProtoWriter.message(length: ProtoWriter.delimitedLength(length, field: field), into: bytes) { writer in
            writer.delimited(field, length: length) { write(&$0) }
        }
    }

    /// Bytes of a `home.v1.CharacteristicWriteAction`: its two identifiers and its target value.
    private static func length(of action: CharacteristicWriteAction) -> Int {
        2 * ProtoWriter.idFieldLength
            + ProtoWriter.delimitedLength(ProtoWriter.valueLength(action.targetValue), field: 3)
    }
}
