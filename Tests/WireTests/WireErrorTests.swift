import Testing
import Wire

/// Every ``WireError`` case, each produced by a crafted input.
@Suite struct WireErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var expectsPreface = false
        var maxFrameSize = WireLimits.defaultMaxFrameSize
        var error: WireError
        var testDescription: String { name }
    }

    /// A frame header followed by `payload`, with the length taken from the payload unless given.
    static func frame(
        _ type: UInt8,
        flags: UInt8 = 0,
        stream: UInt32,
        payload: [UInt8],
        length: UInt32? = nil
    ) -> [UInt8] {
        let length = length ?? UInt32(payload.count)
        return [
            UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type,
            flags,
            UInt8(stream >> 24), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF),
        ] + payload
    }

    static let cases: [Case] = [
        Case(
            name: "HTTP request instead of a preface",
            bytes: Array("GET / HTTP/1.1\r\n".utf8),
            expectsPreface: true,
            error: .badMagic
        ),
        Case(name: "wrong first byte alone", bytes: [0x16], expectsPreface: true, error: .badMagic),
        Case(
            name: "the preface again where a frame belongs",
            bytes: Preface.magic + [0, 1] + Preface.magic + [0, 1, 0, 0],
            expectsPreface: true,
            error: .secondPreface
        ),
        Case(
            name: "the preface again, alone (refused without waiting for a whole header)",
            bytes: Preface.magic + [0, 1] + Preface.magic + [0, 1],
            expectsPreface: true,
            error: .secondPreface
        ),
        Case(
            name: "only the length of a frame over the limit",
            bytes: [0xFF, 0xFF, 0xFF, 0xFF],
            error: .frameTooLarge(limit: WireLimits.defaultMaxFrameSize, actual: 0xFFFF_FFFF)
        ),
        Case(name: "version 2", bytes: Preface.magic + [0, 2], expectsPreface: true, error: .unsupportedVersion(2)),
        Case(name: "version 0", bytes: Preface.magic + [0, 0], expectsPreface: true, error: .unsupportedVersion(0)),
        Case(
            name: "frame over the limit",
            bytes: frame(3, stream: 1, payload: [], length: 0xFFFF_FFFF),
            error: .frameTooLarge(limit: WireLimits.defaultMaxFrameSize, actual: 0xFFFF_FFFF)
        ),
        Case(name: "type 0", bytes: frame(0, stream: 0, payload: []), error: .unknownFrameType(0)),
        Case(name: "type 0x0A", bytes: frame(0x0A, stream: 1, payload: []), error: .unknownFrameType(0x0A)),
        Case(name: "message on stream 0", bytes: frame(3, stream: 0, payload: [1]), error: .missingStreamID(.message)),
        Case(
            name: "call start on stream 0",
            bytes: frame(2, stream: 0, payload: []),
            error: .missingStreamID(.callStart)
        ),
        Case(
            name: "ping on stream 5",
            bytes: frame(7, stream: 5, payload: [UInt8](repeating: 0, count: 8)),
            error: .unexpectedStreamID(.ping, StreamID(5))
        ),
        Case(
            name: "settings on stream 1",
            bytes: frame(1, stream: 1, payload: []),
            error: .unexpectedStreamID(.settings, StreamID(1))
        ),
        Case(
            name: "ping of 7 bytes",
            bytes: frame(7, stream: 0, payload: [1, 2, 3, 4, 5, 6, 7]),
            error: .invalidPayloadLength(.ping, 7)
        ),
        Case(
            name: "pong of 9 bytes",
            bytes: frame(8, stream: 0, payload: [UInt8](repeating: 1, count: 9)),
            error: .invalidPayloadLength(.pong, 9)
        ),
        Case(
            name: "cancel with payload",
            bytes: frame(5, stream: 3, payload: [0]),
            error: .invalidPayloadLength(.cancel, 1)
        ),
        Case(
            name: "credit of 3 bytes",
            bytes: frame(6, stream: 3, payload: [0, 0, 1]),
            error: .invalidPayloadLength(.credit, 3)
        ),
        Case(
            name: "settings of 7 bytes",
            bytes: frame(1, stream: 0, payload: [0, 9, 0, 0, 0, 1, 0]),
            error: .invalidPayloadLength(.settings, 7)
        ),
        Case(
            name: "method length past the end",
            bytes: frame(2, stream: 1, payload: [0x00, 0x10, 0x61]),
            error: .truncatedPayload(.callStart)
        ),
        Case(
            name: "metadata count past the end",
            bytes: frame(2, stream: 1, payload: [0x00, 0x01, 0x61, 0, 0, 0, 0, 0x00, 0x02, 0x01, 0x6B, 0x00, 0x00]),
            error: .truncatedPayload(.callStart)
        ),
        Case(
            name: "call end without a code",
            bytes: frame(4, stream: 1, payload: [0]),
            error: .truncatedPayload(.callEnd)
        ),
        Case(
            name: "status message length past the end",
            bytes: frame(4, stream: 1, payload: [0, 5, 0, 9, 0x61]),
            error: .truncatedPayload(.callEnd)
        ),
        Case(
            name: "goaway of 5 bytes",
            bytes: frame(9, stream: 0, payload: [0, 0, 0, 1, 0]),
            error: .truncatedPayload(.goAway)
        ),
        Case(
            name: "bytes after the metadata",
            bytes: frame(2, stream: 1, payload: [0x00, 0x01, 0x61, 0, 0, 0, 0, 0x00, 0x00, 0xFF, 0xFF]),
            error: .trailingBytes(.callStart, count: 2)
        ),
        Case(
            name: "method name not UTF-8",
            bytes: frame(2, stream: 1, payload: [0x00, 0x02, 0xC3, 0x28, 0, 0, 0, 0, 0, 0]),
            error: .invalidUTF8(.callStart)
        ),
        Case(
            name: "metadata key not UTF-8",
            bytes: frame(2, stream: 1, payload: [0x00, 0x01, 0x61, 0, 0, 0, 0, 0x00, 0x01, 0x01, 0xFF, 0x00, 0x00]),
            error: .invalidUTF8(.callStart)
        ),
        Case(
            name: "status message not UTF-8",
            bytes: frame(4, stream: 1, payload: [0, 2, 0, 1, 0x80]),
            error: .invalidUTF8(.callEnd)
        ),
        Case(
            name: "goaway message not UTF-8",
            bytes: frame(9, stream: 0, payload: [0, 0, 0, 1, 0, 0, 0xFE]),
            error: .invalidUTF8(.goAway)
        ),
        Case(
            name: "max frame size below 16 KiB",
            bytes: frame(1, stream: 0, payload: [0x00, 0x01, 0x00, 0x00, 0x3F, 0xFF]),
            error: .invalidSettingValue(.maxFrameSize, 16_383)
        ),
        Case(
            name: "max frame size above 16 MiB",
            bytes: frame(1, stream: 0, payload: [0x00, 0x01, 0x01, 0x00, 0x00, 0x01]),
            error: .invalidSettingValue(.maxFrameSize, 16_777_217)
        ),
        Case(
            name: "zero credit",
            bytes: frame(6, stream: 9, payload: [0, 0, 0, 0]),
            error: .zeroCreditIncrement(StreamID(9))
        ),
    ]

    @Test(arguments: cases)
    func craftedInputProducesItsError(_ testCase: Case) throws {
        var decoder = FrameDecoder(maxFrameSize: testCase.maxFrameSize, expectsPreface: testCase.expectsPreface)
        decoder.append(contentsOf: testCase.bytes)
        #expect(throws: testCase.error) {
            while try decoder.nextFrame() != nil {}
        }
    }

    @Test func truncatedFrameAtEndOfInput() throws {
        var decoder = FrameDecoder(expectsPreface: false)
        decoder.append(contentsOf: Self.frame(3, stream: 1, payload: [1, 2, 3]).dropLast())
        #expect(try decoder.nextFrame() == nil)
        #expect(throws: WireError.truncatedFrame(bufferedBytes: 12)) { try decoder.finish() }
    }

    /// The start of a second preface waits for the rest of the magic: the error must not depend on
    /// how the bytes are cut.
    @Test func aPartialSecondMagicWaitsForTheRest() throws {
        var decoder = FrameDecoder()
        decoder.append(contentsOf: Preface.magic + [0, 1] + Preface.magic.prefix(4))
        #expect(try decoder.nextFrame() == .preface(Preface(version: 1)))
        #expect(try decoder.nextFrame() == nil)
        decoder.append(contentsOf: Preface.magic.dropFirst(4))
        #expect(throws: WireError.secondPreface) { try decoder.nextFrame() }
    }

    @Test func truncatedPrefaceAtEndOfInput() throws {
        var decoder = FrameDecoder()
        decoder.append(contentsOf: Preface.magic.prefix(3))
        #expect(try decoder.nextFrame() == nil)
        #expect(throws: WireError.truncatedFrame(bufferedBytes: 3)) { try decoder.finish() }
    }

    /// Guards the list above: the switch stops compiling when a case is added, and the test fails until
    /// the new case has a crafted input.
    static func caseName(_ error: WireError) -> String {
        switch error {
        case .badMagic: "badMagic"
        case .unsupportedVersion: "unsupportedVersion"
        case .frameTooLarge: "frameTooLarge"
        case .unknownFrameType: "unknownFrameType"
        case .missingStreamID: "missingStreamID"
        case .unexpectedStreamID: "unexpectedStreamID"
        case .invalidPayloadLength: "invalidPayloadLength"
        case .truncatedPayload: "truncatedPayload"
        case .trailingBytes: "trailingBytes"
        case .invalidUTF8: "invalidUTF8"
        case .invalidSettingValue: "invalidSettingValue"
        case .zeroCreditIncrement: "zeroCreditIncrement"
        case .truncatedFrame: "truncatedFrame"
        case .secondPreface: "secondPreface"
        }
    }

    @Test func everyErrorCaseIsCovered() {
        let covered = Set(Self.cases.map { Self.caseName($0.error) } + ["truncatedFrame"])
        #expect(covered.count == 14)
    }

    @Test func errorsDescribeThemselves() {
        for testCase in Self.cases {
            #expect(!testCase.error.description.isEmpty)
        }
        #expect(WireError.frameTooLarge(limit: 10, actual: 20).description.contains("20"))
    }
}
