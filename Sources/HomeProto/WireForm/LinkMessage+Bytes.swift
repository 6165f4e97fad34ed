import Foundation
import SwiftProtobuf

/// The accessory link's two hottest messages, read and written by hand: every forwarded write is a
/// `LinkMessage` carrying a `Command` to the accessory and an `AnswerCommandRequest` back. Decoding
/// the three nested messages with swift-protobuf's generic decoder took 28% of a simulated
/// accessory's core, and encoding the answer 5% (`perf`, 50 connections × 16 writes in flight):
/// enough that the accessory, not the server, limited the load generator. These read only the
/// shape the server writes (each field once, known fields only, one scalar value) and hand
/// anything else to the generated decoder, so they decode exactly what it decodes.
extension Home_V1_LinkMessage {
    /// Decodes a link message: a command in the server's shape by hand, anything else with the
    /// generated decoder.
    /// - Throws: the generated decoder's error for bytes that are not a `LinkMessage`.
    public init(linkBytes bytes: [UInt8]) throws {
        if let command = Self.command(in: bytes[...]) {
            self.init()
            kind = .command(command)
        } else {
            try self.init(serializedBytes: bytes)
        }
    }

    /// The command of a message whose only field is `command` (4), when every field is in the
    /// server's shape; `nil` sends the bytes to the generated decoder.
    private static func command(in bytes: ArraySlice<UInt8>) -> Home_V1_Command? {
        var reader = ProtoFieldReader(bytes)
        guard let (number, wireType) = reader.nextKey(), number == 4, wireType == 2,
            let contents = reader.lengthDelimited(), reader.isAtEnd
        else { return nil }
        return command(contents)
    }

    private static func command(_ bytes: ArraySlice<UInt8>) -> Home_V1_Command? {
        var command = Home_V1_Command()
        var seen = FieldsSeen()
        var reader = ProtoFieldReader(bytes)
        while let (number, wireType) = reader.nextKey() {
            // A repeated field merges (or the last wins): the generated decoder's business.
            guard seen.insert(number) else { return nil }
            switch (number, wireType) {
            case (1, 0):
                guard let id = reader.varint() else { return nil }
                command.commandID = id
            case (2, 2):
                guard let id = reader.lengthDelimited() else { return nil }
                command.accessoryID = Data(id)
            case (3, 2):
                guard command.action == nil, let write = reader.lengthDelimited().flatMap(self.write) else {
                    return nil
                }
                command.action = .write(write)
            case (4, 2):
                guard command.action == nil, let read = reader.lengthDelimited().flatMap(self.read) else { return nil }
                command.action = .read(read)
            case (5, 2):
                guard command.action == nil, reader.lengthDelimited()?.isEmpty == true else { return nil }
                command.action = .identify(Home_V1_IdentifyCommand())
            case (6, 0):
                guard let timeout = reader.varint(), let milliseconds = UInt32(exactly: timeout) else { return nil }
                command.timeoutMs = milliseconds
            default:
                return nil
            }
        }
        return reader.isMalformed ? nil : command
    }

    private static func write(_ bytes: ArraySlice<UInt8>) -> Home_V1_WriteCommand? {
        var write = Home_V1_WriteCommand()
        var seen = FieldsSeen()
        var reader = ProtoFieldReader(bytes)
        while let (number, wireType) = reader.nextKey() {
            guard seen.insert(number) else { return nil }
            switch (number, wireType) {
            case (1, 2):
                guard let id = reader.lengthDelimited() else { return nil }
                write.characteristicID = Data(id)
            case (2, 2):
                guard let value = reader.lengthDelimited().flatMap(self.value) else { return nil }
                write.value = value
            default:
                return nil
            }
        }
        return reader.isMalformed ? nil : write
    }

    private static func read(_ bytes: ArraySlice<UInt8>) -> Home_V1_ReadCommand? {
        var reader = ProtoFieldReader(bytes)
        var read = Home_V1_ReadCommand()
        if let (number, wireType) = reader.nextKey() {
            guard number == 1, wireType == 2, let id = reader.lengthDelimited() else { return nil }
            read.characteristicID = Data(id)
        }
        return reader.isAtEnd && !reader.isMalformed ? read : nil
    }

    /// A value of at most one bool, integer or double field (strings and data go to the generated
    /// decoder, which checks their UTF-8).
    private static func value(_ bytes: ArraySlice<UInt8>) -> Home_V1_CharacteristicValue? {
        var value = Home_V1_CharacteristicValue()
        var reader = ProtoFieldReader(bytes)
        guard let (number, wireType) = reader.nextKey() else { return reader.isMalformed ? nil : value }
        switch (number, wireType) {
        case (1, 0): value.kind = reader.varint().map { .boolValue($0 != 0) }
        case (2, 0): value.kind = reader.varint().map { .signedValue(Int64(bitPattern: $0)) }
        case (3, 0): value.kind = reader.varint().map { .unsignedValue($0) }
        case (4, 1): value.kind = reader.fixed64().map { .floatValue(Double(bitPattern: $0)) }
        default: return nil
        }
        return value.kind != nil && reader.isAtEnd ? value : nil
    }
}

/// The field numbers read so far (below 64; the rest are unknown fields), without a heap allocation.
private struct FieldsSeen {
    private var bits: UInt64 = 0

    /// Whether `number` is new (and then notes it); `false` for a repeated or an unknown one.
    mutating func insert(_ number: UInt64) -> Bool {
        guard number < 64, bits & (1 << number) == 0 else { return false }
        bits |= 1 << number
        return true
    }
}

extension Home_V1_AnswerCommandRequest {
    /// The bytes of an answer without a value (to a write or an identify request), written by hand:
    /// `command_id` (1) and `hap_status` (2), each left out when zero, as every encoder writes them.
    public static func bytes(commandID: UInt64, hapStatus: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(22)
        if commandID != 0 {
            bytes.append(1 << 3)
            appendVarint(commandID, to: &bytes)
        }
        if hapStatus != 0 {
            bytes.append(2 << 3)
            // A negative int32 is written as its 64-bit two's complement: ten bytes.
            appendVarint(UInt64(bitPattern: Int64(hapStatus)), to: &bytes)
        }
        return bytes
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}
