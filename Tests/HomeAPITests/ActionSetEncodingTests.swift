import HomeProto
import SwiftProtobuf
import Testing

@testable import HomeAPI
@testable import HomeService

/// An action set written by ``ActionSetEncoding`` is byte for byte what the generated encoder
/// makes of ``ProtoEncoding/actionSet(_:)``, alone and as the answer that carries it.
@Suite struct ActionSetEncodingTests {
    static let values: [CharacteristicValue] = [
        .bool(false), .bool(true), .int(0), .int(-1), .int(.max), .float(0), .float(-273.15), .string(""),
        .string("héllo"), .data([]), .data([0, 0xFF]),
    ]

    static let actionSets: [ActionSet] = ActionSet.Kind.allCases.flatMap { kind in
        [0, 1, 3, values.count].flatMap { actionCount in
            [(Int64?.none, false), (0, true), (1_795_000_000_000, false), (-5, true)].map { last, executing in
                ActionSet(
                    id: .random(),
                    home: .random(),
                    name: kind == .userDefined ? "Evening 夜" : "",
                    kind: kind,
                    actions: values.prefix(actionCount).map {
                        CharacteristicWriteAction(characteristic: .random(), targetValue: $0)
                    },
                    lastExecutionDate: last,
                    sequence: 1,
                    isExecuting: executing
                )
            }
        }
    }

    @Test(arguments: actionSets)
    func bytesAreTheGeneratedEncoders(actionSet: ActionSet) throws {
        let message = ProtoEncoding.actionSet(actionSet)
        let alone: [UInt8] = try message.serializedBytes()
        #expect(ActionSetEncoding.encode(actionSet) == alone)
        let answer: [UInt8] = try Home_V1_UpdateActionTargetValueResponse.with { $0.actionSet = message }
            .serializedBytes()
        #expect(ActionSetEncoding.answer(actionSet) == answer)
    }
}
