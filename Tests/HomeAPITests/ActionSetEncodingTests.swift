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
        // Written into an array given back after an earlier answer: the same bytes.
        let buffers = AnswerBuffers()
        buffers.giveBack(Array(repeating: 0xEE, count: 300))
        #expect(ActionSetEncoding.answer(actionSet, into: buffers.take()) == answer)
    }

    /// Given-back arrays come back empty with their room; large ones, and more than the limit,
    /// are let go (what is kept stays bounded).
    @Test func answerBuffersKeepSmallArraysEmptiedAndBounded() {
        let buffers = AnswerBuffers()
        var large: [UInt8] = []
        large.reserveCapacity(AnswerBuffers.maxKeptCapacity + 1)
        buffers.giveBack(large)
        #expect(buffers.take().capacity == 0)
        buffers.giveBack([UInt8](repeating: 1, count: 100))
        let reused = buffers.take()
        #expect(reused.isEmpty && reused.capacity >= 100)
        #expect(buffers.take().capacity == 0)
        for _ in 0...AnswerBuffers.maxKept { buffers.giveBack([UInt8](repeating: 2, count: 10)) }
        var kept = 0
        while buffers.take().capacity > 0 { kept += 1 }
        #expect(kept == AnswerBuffers.maxKept)
    }
}
