import TestSupport
import Testing
import Wire
import WireTesting

/// decode(encode(frame)) == frame for random frames of every type.
@Suite struct FrameRoundTripTests {
    static let iterations = 300

    @Test(arguments: FrameType.allCases.map(\.rawValue))
    func roundTripsRandomFrames(typeByte: UInt8) throws {
        let type = try #require(FrameType(rawValue: typeByte))
        var random = SeededGenerator(seed: UInt64(typeByte) * 7919)
        var stream: [UInt8] = []
        var frames: [Frame] = []
        for _ in 0..<Self.iterations {
            let frame = Self.randomFrame(of: type, using: &random)
            frames.append(frame)
            FrameEncoder.encode(frame, into: &stream)
        }
        let decoded = try decodeAll(stream) { Int.random(in: 1...512, using: &random) }
        #expect(decoded == frames)
    }

    @Test(arguments: 0..<20)
    func takingCallFramesByHeaderDecodesWhatNextFrameDoes(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed) &* 104_729 &+ 1)
        var stream = encoded(.preface(Preface()))
        var frames: [Frame] = [.preface(Preface())]
        for _ in 0..<200 {
            let frame = Self.randomFrame(of: FrameType.allCases.randomElement(using: &random)!, using: &random)
            frames.append(frame)
            FrameEncoder.encode(frame, into: &stream)
        }
        // The verifier decodes whole, in chunks, and in chunks taking call frames by their headers.
        let control = 0x80 | UInt8(seed * 13 % 128)
        #expect(FrameDecoderVerifier.violations(in: [control] + stream) == [])
        #expect(try decodeAll(stream, expectsPreface: true) { stream.count } == frames)
    }

    @Test func aBadCallStartTakenByItsHeaderFailsTheDecoderForGood() throws {
        var decoder = FrameDecoder(expectsPreface: false)
        // A CALL_START whose method length (0x0100) points past its 3-byte payload.
        decoder.append(contentsOf: [0, 0, 0, 3, FrameType.callStart.rawValue, 0, 0, 0, 0, 1, 0x01, 0x00, 0x41])
        let header = try #require(try decoder.nextCompleteHeader())
        #expect(throws: WireError.truncatedPayload(.callStart)) { try decoder.takeCallStart(header) }
        decoder.append(contentsOf: encoded(.ping(1)))
        #expect(throws: WireError.truncatedPayload(.callStart)) { try decoder.nextCompleteHeader() }
        #expect(throws: WireError.truncatedPayload(.callStart)) { try decoder.nextFrame() }
    }

    /// A server takes a CALL_START's method from the decoder: it changes, and its count moves, only
    /// when a call names another method.
    @Test func callOptionsLeaveTheMethodToTheDecoderAndCountItsChanges() throws {
        var decoder = FrameDecoder(expectsPreface: false)
        let metadata = [MetadataEntry(key: "trace-id", value: [7])]
        let calls: [(String, UInt64)] = [
            ("a.v1.S/M", 1), ("a.v1.S/M", 1), ("a.v1.S/Other", 2), ("", 3), ("a.v1.S/M", 4),
        ]
        for (index, (method, changes)) in calls.enumerated() {
            let start = CallStart(method: method, timeoutMilliseconds: UInt32(index), metadata: metadata)
            decoder.append(contentsOf: encoded(.callStart(StreamID(UInt32(2 * index + 1)), start)))
            let header = try #require(try decoder.nextCompleteHeader())
            #expect(
                try decoder.takeCallOptions(header)
                    == CallStartOptions(timeoutMilliseconds: UInt32(index), metadata: metadata)
            )
            #expect(decoder.lastMethod == method)
            #expect(decoder.methodChanges == changes)
        }
    }

    @Test(arguments: [1, 2, 0xFFFF, 0x1_0000, 0x1234_5678, 0xFFFF_FFFF] as [UInt32])
    func theOneAppendCallEndIsTheGeneralEncodersOKCallEnd(streamID: UInt32) {
        var general: [UInt8] = [9]
        FrameEncoder.encodeCallEnd(streamID: StreamID(streamID), status: .ok, into: &general)
        var oneAppend: [UInt8] = [9]
        FrameEncoder.encodeOKCallEnd(streamID: StreamID(streamID), into: &oneAppend)
        #expect(oneAppend == general)
        #expect(oneAppend.count == 1 + FrameEncoder.okCallEndLength)
    }

    /// The composed answer (one append for a small response) is byte for byte the MESSAGE and the
    /// OK CALL_END written one after the other, on both sides of the size limit.
    @Test(arguments: [0, 2, 63, 64, 65, 300], [1, 0x1_0000, 0xFFFF_FFFF] as [UInt32])
    func aUnaryAnswerIsItsMessageThenAnOKCallEnd(responseLength: Int, streamID: UInt32) throws {
        let response = (0..<responseLength).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        var separate: [UInt8] = [9]
        FrameEncoder.encodeMessage(streamID: StreamID(streamID), payload: response, endStream: false, into: &separate)
        FrameEncoder.encodeOKCallEnd(streamID: StreamID(streamID), into: &separate)
        var composed: [UInt8] = [9]
        FrameEncoder.encodeUnaryAnswer(streamID: StreamID(streamID), response: response, into: &composed)
        #expect(composed == separate)
        let frames = try decodeAll(Array(composed.dropFirst())) { 1 << 20 }
        #expect(
            frames == [
                .message(StreamID(streamID), payload: response, endStream: false), .callEnd(StreamID(streamID), .ok),
            ]
        )
    }

    @Test func roundTripsPreface() throws {
        #expect(try decodeAll(encoded(.preface(Preface())), expectsPreface: true) { 3 } == [.preface(Preface())])
    }

    @Test func clipsLongStatusMessageAtACharacterBoundary() throws {
        // 3-byte characters: 65,535 is a multiple of 3, so add one ASCII byte to force a cut mid-character.
        let message = "a" + String(repeating: "界", count: 30_000)
        let frame = Frame.callEnd(StreamID(1), CallStatus(code: .internal, message: message))
        let decoded = try decodeAll(encoded(frame)) { 100_000 }
        guard case .callEnd(_, let status) = try #require(decoded.first) else {
            Issue.record("expected a call end")
            return
        }
        #expect(status.message.utf8.count == 65_533)
        #expect(message.hasPrefix(status.message))
    }

    static func randomFrame(of type: FrameType, using random: inout SeededGenerator) -> Frame {
        let stream = StreamID(UInt32.random(in: 1...UInt32.max, using: &random))
        switch type {
        case .settings:
            let entries = (0..<Int.random(in: 0...6, using: &random)).map { _ in
                let id = SettingID(rawValue: UInt16.random(in: 2...UInt16.max, using: &random))
                return Setting(id, UInt32.random(in: 0...UInt32.max, using: &random))
            }
            let frameSize = UInt32.random(in: 16_384...16_777_216, using: &random)
            return .settings(Settings(entries + [Setting(.maxFrameSize, frameSize)]))
        case .callStart:
            let metadata = (0..<Int.random(in: 0...5, using: &random)).map { _ in
                MetadataEntry(
                    key: randomText(maxLength: 40, using: &random),
                    value: randomBytes(maxLength: 300, using: &random)
                )
            }
            let call = CallStart(
                method: randomText(maxLength: 80, using: &random),
                timeoutMilliseconds: UInt32.random(in: 0...UInt32.max, using: &random),
                metadata: metadata
            )
            return .callStart(stream, call)
        case .message:
            return .message(
                stream,
                payload: randomBytes(maxLength: 3000, using: &random),
                endStream: Bool.random(using: &random)
            )
        case .callEnd:
            let status = CallStatus(
                code: StatusCode(rawValue: UInt16.random(in: 0...UInt16.max, using: &random)),
                message: randomText(maxLength: 200, using: &random),
                details: randomBytes(maxLength: 100, using: &random),
                isRetryable: Bool.random(using: &random)
            )
            return .callEnd(stream, status)
        case .cancel:
            return .cancel(stream)
        case .credit:
            return .credit(stream, increment: UInt32.random(in: 1...UInt32.max, using: &random))
        case .ping:
            return .ping(random.next())
        case .pong:
            return .pong(random.next())
        case .goAway:
            let goAway = GoAway(
                lastStreamID: StreamID(UInt32.random(in: 0...UInt32.max, using: &random)),
                code: StatusCode(rawValue: UInt16.random(in: 0...16, using: &random)),
                message: randomText(maxLength: 100, using: &random)
            )
            return .goAway(goAway)
        }
    }

    /// Text mixing ASCII, accented Latin, CJK and emoji, so multi-byte UTF-8 is exercised.
    static func randomText(maxLength: Int, using random: inout SeededGenerator) -> String {
        let alphabet: [Character] = ["a", "Z", "0", "/", ".", " ", "é", "ß", "卧", "室", "🏠", "'"]
        var text = ""
        for _ in 0..<Int.random(in: 0...maxLength / 4, using: &random) {
            text.append(alphabet.randomElement(using: &random)!)
        }
        return text
    }

    static func randomBytes(maxLength: Int, using random: inout SeededGenerator) -> [UInt8] {
        (0..<Int.random(in: 0...maxLength, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
    }
}
