import Foundation
import HomeProto
import SwiftProtobuf
import TestSupport
import Testing

/// The accessory link's hand-written reader and writer give exactly what swift-protobuf gives.
@Suite struct LinkMessageBytesTests {
    @Test func decodesEveryCommandAsTheGeneratedDecoderDoes() throws {
        var random = SeededGenerator(seed: 57)
        for _ in 0..<2_000 {
            var message = Home_V1_LinkMessage()
            message.command = Self.command(&random)
            let bytes: [UInt8] = try message.serializedBytes()
            #expect(try Self.same(Home_V1_LinkMessage(linkBytes: bytes), message))
        }
    }

    @Test func otherMessagesGoToTheGeneratedDecoder() throws {
        var paired = Home_V1_LinkMessage()
        paired.paired.credential = "secret"
        var attached = Home_V1_LinkMessage()
        attached.attached = Home_V1_Attached()
        for message in [paired, attached, Home_V1_LinkMessage()] {
            #expect(try Home_V1_LinkMessage(linkBytes: try message.serializedBytes()) == message)
        }
    }

    /// Damaged commands (bytes changed, cut short or added): the reader decodes what the generated
    /// decoder decodes, and fails where it fails.
    @Test func damagedBytesDecodeOrFailAsTheGeneratedDecoderDoes() throws {
        var random = SeededGenerator(seed: 5757)
        for _ in 0..<20_000 {
            var message = Home_V1_LinkMessage()
            message.command = Self.command(&random)
            var bytes: [UInt8] = try message.serializedBytes()
            switch Int.random(in: 0..<4, using: &random) {
            case 0: bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            case 1: bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
            case 2:
                bytes.append(
                    contentsOf: (0..<Int.random(in: 1...4, using: &random)).map { _ in
                        UInt8.random(in: 0...255, using: &random)
                    }
                )
            default: bytes[Int.random(in: 0..<bytes.count, using: &random)] ^= 0x80
            }
            let generated = Result { try Home_V1_LinkMessage(serializedBytes: bytes) }
            let handWritten = Result { try Home_V1_LinkMessage(linkBytes: bytes) }
            switch (generated, handWritten) {
            case (.success(let expected), .success(let actual)):
                #expect(try Self.same(actual, expected), "bytes \(bytes)")
            case (.failure, .failure):
                break
            default:
                Issue.record("the generated decoder gave \(generated), the reader \(handWritten), for \(bytes)")
            }
        }
    }

    @Test func writesAnswersAsTheGeneratedEncoderDoes() throws {
        var random = SeededGenerator(seed: 70409)
        let statuses: [Int32] = [0, -70401, -70409, -70412, 1, .min, .max]
        let ids: [UInt64] = [0, 1, 127, 128, 300, .max]
        for _ in 0..<500 {
            var answer = Home_V1_AnswerCommandRequest()
            answer.commandID = Bool.random(using: &random) ? ids.randomElement(using: &random)! : random.next()
            answer.hapStatus = statuses.randomElement(using: &random)!
            let expected: [UInt8] = try answer.serializedBytes()
            #expect(
                Home_V1_AnswerCommandRequest.bytes(commandID: answer.commandID, hapStatus: answer.hapStatus) == expected
            )
        }
    }

    /// Equal, NaN values included (a NaN is not == to itself): the same fields give the same bytes.
    private static func same(_ a: Home_V1_LinkMessage, _ b: Home_V1_LinkMessage) throws -> Bool {
        try a.serializedBytes() as [UInt8] == b.serializedBytes()
    }

    private static func command(_ random: inout SeededGenerator) -> Home_V1_Command {
        var command = Home_V1_Command()
        if Bool.random(using: &random) {
            command.commandID = random.next() >> UInt64.random(in: 0...63, using: &random)
        }
        if Bool.random(using: &random) { command.accessoryID = id(&random) }
        if Bool.random(using: &random) { command.timeoutMs = UInt32.random(in: 0...60_000, using: &random) }
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            var write = Home_V1_WriteCommand()
            if Bool.random(using: &random) { write.characteristicID = id(&random) }
            if Int.random(in: 0..<5, using: &random) > 0 { write.value = value(&random) }
            command.write = write
        case 1:
            var read = Home_V1_ReadCommand()
            if Bool.random(using: &random) { read.characteristicID = id(&random) }
            command.read = read
        case 2:
            command.identify = Home_V1_IdentifyCommand()
        default:
            break
        }
        return command
    }

    private static func value(_ random: inout SeededGenerator) -> Home_V1_CharacteristicValue {
        var value = Home_V1_CharacteristicValue()
        switch Int.random(in: 0..<7, using: &random) {
        case 0: value.boolValue = Bool.random(using: &random)
        case 1: value.signedValue = Int64(bitPattern: random.next())
        case 2: value.unsignedValue = random.next()
        case 3: value.floatValue = Double(bitPattern: random.next())
        case 4: value.stringValue = "Lamp é \(random.next())"
        case 5: value.dataValue = Data(id(&random).prefix(Int.random(in: 0...16, using: &random)))
        default: break
        }
        return value
    }

    private static func id(_ random: inout SeededGenerator) -> Data {
        Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) })
    }
}
