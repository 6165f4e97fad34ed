import HomeProto
import SwiftProtobuf
import Testing

@testable import HomeAPI

/// The `AnswerCommand` shortcut reads exactly what the generated decoder reads, and leaves every
/// other shape to it.
@Suite struct CommandAnswerTests {
    @Test func readsTheShapesAWriteAnswerHasAsTheGeneratedDecoderDoes() throws {
        // A tenth varint byte with bits past the 64th: both keep the low 64 bits, or both refuse.
        let overlong: [UInt8] = [0x08] + [UInt8](repeating: 0xFF, count: 9) + [0x7F]
        let generated = try? Home_V1_AnswerCommandRequest(serializedBytes: overlong)
        #expect(CommandAnswer(asReceived(overlong))?.commandID == generated?.commandID)
        for (commandID, hapStatus) in [(UInt64(0), Int32(0)), (1, 0), (300, -70402), (.max, .min), (7, .max)] {
            var request = Home_V1_AnswerCommandRequest()
            request.commandID = commandID
            request.hapStatus = hapStatus
            let bytes: [UInt8] = try request.serializedBytes()
            let answer = try #require(CommandAnswer(asReceived(bytes)))
            #expect(answer.commandID == commandID && answer.hapStatus == hapStatus)
        }
    }

    @Test func leavesAValueAndEveryOtherShapeToTheGeneratedDecoder() throws {
        var read = Home_V1_AnswerCommandRequest()
        read.commandID = 5
        read.value.boolValue = true
        let others: [[UInt8]] = [
            try read.serializedBytes(),  // a read's answer carries its value
            [0x08, 0x80],  // a varint cut short
            [0x08] + [UInt8](repeating: 0xFF, count: 10) + [0x01],  // eleven bytes
            [0x18, 0x00],  // an unknown varint field
            [0x0A, 0x00],  // command_id with the wrong wire type
        ]
        for bytes in others { #expect(CommandAnswer(asReceived(bytes)) == nil, "\(bytes)") }
    }

    /// Random and damaged requests: whatever the shortcut accepts decodes to the same fields through
    /// swift-protobuf.
    @Test func everyRequestTheShortcutAcceptsDecodesTheSameThroughSwiftProtobuf() throws {
        var generator = SystemRandomNumberGenerator()
        var accepted = 0
        func varint(_ value: UInt64) -> [UInt8] {
            var bytes: [UInt8] = []
            var rest = value
            while rest >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            return bytes + [UInt8(rest)]
        }
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                switch Int.random(in: 0..<5, using: &generator) {
                case 0:
                    bytes +=
                        [0x08]
                        + varint(UInt64.random(in: 0...UInt64.max, using: &generator) >> UInt64.random(in: 0...63))
                case 1: bytes += [0x10] + varint(UInt64(bitPattern: Int64(Int32.random(in: .min ... .max))))
                case 2: bytes += [0x10] + varint(UInt64.random(in: 0...UInt64.max, using: &generator))
                case 3: bytes += [0x1A, 0x02, 0x08, 0x01]
                default: bytes += (0..<Int.random(in: 1...4, using: &generator)).map { _ in UInt8.random(in: 0...255) }
                }
            }
            if !bytes.isEmpty, Bool.random(using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255)
            }
            guard let answer = CommandAnswer(asReceived(bytes)) else { continue }
            accepted += 1
            let decoded = try Home_V1_AnswerCommandRequest(serializedBytes: bytes)
            #expect(!decoded.hasValue, "\(bytes)")
            #expect(decoded.commandID == answer.commandID, "\(bytes)")
            #expect(decoded.hapStatus == answer.hapStatus, "\(bytes)")
        }
        #expect(accepted > 2_000)
    }
}
