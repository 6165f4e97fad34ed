import TestSupport
import Testing
import Wire

@Suite struct FrameDecoderTests {
    static let frameNames = GoldenFrames.all.map(\.name)

    @Test(arguments: frameNames)
    func decodesGoldenFrameWhole(name: String) throws {
        let frame = try #require(GoldenFrames.all.first { $0.name == name }?.frame)
        let bytes = encoded(frame)
        let isPreface = name == "preface"
        #expect(try decodeAll(bytes, expectsPreface: isPreface) { bytes.count } == [frame])
    }

    @Test(arguments: frameNames)
    func decodesGoldenFrameOneByteAtATime(name: String) throws {
        let frame = try #require(GoldenFrames.all.first { $0.name == name }?.frame)
        let bytes = encoded(frame)
        #expect(try decodeAll(bytes, expectsPreface: name == "preface") { 1 } == [frame])
    }

    @Test func decodesSeveralFramesInOneBuffer() throws {
        let expected = GoldenFrames.all.map(\.frame)
        let bytes = encoded(.preface(Preface())) + GoldenFrames.concatenatedFrames
        #expect(try decodeAll(bytes, expectsPreface: true) { bytes.count } == expected)
    }

    @Test(arguments: 0..<50)
    func decodesFramesSplitAtRandomPoints(seed: Int) throws {
        var random = SeededGenerator(seed: UInt64(seed))
        let expected = GoldenFrames.all.map(\.frame)
        let bytes = encoded(.preface(Preface())) + GoldenFrames.concatenatedFrames
        let frames = try decodeAll(bytes, expectsPreface: true) { Int.random(in: 1...40, using: &random) }
        #expect(frames == expected)
    }

    /// The decoder hands out the previous call's method string when the bytes repeat it: a name of
    /// the same length, or one that only shares a prefix, must still come out as itself.
    @Test func repeatedAndSimilarMethodNamesDecodeAsThemselves() throws {
        let names = [
            "home.v1.Health/Check", "home.v1.Health/Check", "home.v1.Health/Chock", "home.v1.Health/Check",
            "home.v1.Health/CheckX", "home.v1.Health/Check", "home.v2.Health/Check", "é.v1.Health/Check",
            "é.v1.Health/Check",
        ]
        let frames = names.enumerated().map { index, name in
            Frame.callStart(
                StreamID(UInt32(2 * index + 1)),
                CallStart(method: name, timeoutMilliseconds: 0, metadata: [])
            )
        }
        let bytes = frames.flatMap(encoded)
        #expect(try decodeAll(bytes, expectsPreface: false) { bytes.count } == frames)
        #expect(try decodeAll(bytes, expectsPreface: false) { 7 } == frames)
    }

    /// The comparison with the previous name goes a word at a time, the last word overlapping the
    /// one before: a name that differs from the previous one in any single byte, whatever its
    /// length, must come out as itself.
    @Test(arguments: [1, 7, 8, 9, 15, 16, 17, 20, 38, 40])
    func aNameDifferingInAnyOneByteDecodesAsItself(length: Int) throws {
        let base = String((0..<length).map { Character(UnicodeScalar(UInt8(ascii: "a") + UInt8($0 % 26))) })
        var names = [base, base]
        for position in 0..<length {
            var bytes = Array(base.utf8)
            bytes[position] = UInt8(ascii: "Z")
            names += [String(decoding: bytes, as: UTF8.self), base]
        }
        let frames = names.enumerated().map { index, name in
            Frame.callStart(StreamID(UInt32(2 * index + 1)), CallStart(method: name))
        }
        let bytes = frames.flatMap(encoded)
        #expect(try decodeAll(bytes, expectsPreface: false) { bytes.count } == frames)
    }

    @Test func returnsNilUntilTheWholeFrameArrives() throws {
        let bytes = encoded(.credit(StreamID(9), increment: 5))
        var decoder = FrameDecoder(expectsPreface: false)
        for byte in bytes.dropLast() {
            decoder.append(contentsOf: [byte])
            #expect(try decoder.nextFrame() == nil)
        }
        #expect(throws: WireError.truncatedFrame(bufferedBytes: bytes.count - 1)) { try decoder.finish() }
        decoder.append(contentsOf: [bytes.last!])
        #expect(try decoder.nextFrame() == .credit(StreamID(9), increment: 5))
        try decoder.finish()
    }

    @Test func rejectsOversizedLengthBeforeBufferingPayload() throws {
        var decoder = FrameDecoder(maxFrameSize: 16_384, expectsPreface: false)
        // A header announcing 16,385 bytes; no payload byte has been sent.
        let header: [UInt8] = [0x00, 0x00, 0x40, 0x01, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]
        decoder.append(contentsOf: header)
        #expect(throws: WireError.frameTooLarge(limit: 16_384, actual: 16_385)) { try decoder.nextFrame() }
        #expect(decoder.bufferedByteCount == header.count)
    }

    @Test func acceptsFrameExactlyAtTheLimit() throws {
        let payload = [UInt8](repeating: 0xAB, count: 16_384)
        let frame = Frame.message(StreamID(1), payload: payload, endStream: true)
        let bytes = encoded(frame)
        #expect(try decodeAll(bytes, maxFrameSize: 16_384) { 4096 } == [frame])
    }

    /// Entries of `size` bytes as counted against the metadata limit: 32 of overhead, a 4-byte
    /// key and the rest value.
    static func metadata(count: Int, size: Int) -> [MetadataEntry] {
        (0..<count).map { _ in MetadataEntry(key: "k-0", value: [UInt8](repeating: 7, count: size - 32 - 3)) }
    }

    /// The CALL_START of `metadata` as decoded, whole.
    static func decodedCallStart(_ metadata: [MetadataEntry]) throws -> CallStart {
        let frame = Frame.callStart(StreamID(1), CallStart(method: "a/B", metadata: metadata))
        let bytes = encoded(frame)
        guard case .callStart(_, let call) = try decodeAll(bytes, chunkSizes: { bytes.count }).first else {
            throw WireError.truncatedFrame(bufferedBytes: bytes.count)
        }
        return call
    }

    @Test func keepsMetadataUpToTheLimitAndFlagsMore() throws {
        let atLimit = Self.metadata(count: WireLimits.maxMetadataSize / 128, size: 128)
        let whole = Frame.callStart(StreamID(1), CallStart(method: "a/B", metadata: atLimit))
        #expect(try decodeAll(encoded(whole)) { 4096 } == [whole])

        let call = try Self.decodedCallStart(atLimit + Self.metadata(count: 3, size: 40))
        let isFlagged = call.exceedsMetadataLimit
        #expect(isFlagged)
        #expect(call.metadata.count == atLimit.count)
        #expect(call.metadata.elementsEqual(atLimit))
    }

    /// 65,535 empty entries, a 192 KiB frame: only what fits the limit is kept (the server refuses
    /// the call), not 65,535 entries for every open call.
    @Test func manyTinyEntriesKeepOnlyWhatFitsTheLimit() throws {
        let entries = [MetadataEntry](
            repeating: MetadataEntry(key: "", value: []),
            count: WireLimits.maxMetadataEntries
        )
        let call = try Self.decodedCallStart(entries)
        let isFlagged = call.exceedsMetadataLimit
        #expect(isFlagged)
        #expect(call.metadata.count == WireLimits.maxMetadataSize / WireLimits.metadataEntryOverhead)
        #expect(call.metadata.capacity < 1_000)
    }

    /// A key past the limit is still checked: the frame must be valid whatever its size.
    @Test func aKeyPastTheLimitMustStillBeUTF8() throws {
        var bytes = encoded(
            .callStart(
                StreamID(1),
                CallStart(
                    method: "a/B",
                    metadata: Self.metadata(count: 200, size: 128) + [MetadataEntry(key: "ab", value: [])]
                )
            )
        )
        // The last entry: key length 2, "ab", value length 0. Make its key invalid UTF-8.
        bytes[bytes.count - 4] = 0xFF
        #expect(throws: WireError.self) { try decodeAll(bytes) { bytes.count } }
    }

    @Test func errorIsSticky() throws {
        var decoder = FrameDecoder(expectsPreface: false)
        decoder.append(contentsOf: [0, 0, 0, 0, 0xEE, 0, 0, 0, 0, 0])
        #expect(throws: WireError.unknownFrameType(0xEE)) { try decoder.nextFrame() }
        decoder.append(contentsOf: encoded(.ping(1)))
        #expect(throws: WireError.unknownFrameType(0xEE)) { try decoder.nextFrame() }
        #expect(throws: WireError.unknownFrameType(0xEE)) { try decoder.finish() }
    }

    @Test func aPayloadTakenInPlaceKeepsItsBytesThroughLaterReads() throws {
        var decoder = FrameDecoder(expectsPreface: false)
        let first: [UInt8] = Array(0..<40)
        decoder.append(contentsOf: encoded(.message(StreamID(1), payload: first, endStream: true)))
        let header = try #require(try decoder.nextCompleteHeader())
        let kept = decoder.takeMessagePayload(header)
        #expect(kept.startIndex != 0)
        // Everything is taken: releasing and later appends reuse the buffer, not the kept bytes.
        decoder.releaseConsumedBytes()
        #expect(decoder.bufferedByteCount == 0)
        for round in 0..<3 {
            let next = [UInt8](repeating: UInt8(200 + round), count: 40)
            decoder.append(
                contentsOf: encoded(.message(StreamID(3 + 2 * UInt32(round)), payload: next, endStream: true))
            )
            let nextHeader = try #require(try decoder.nextCompleteHeader())
            #expect(Array(decoder.takeMessagePayload(nextHeader)) == next)
        }
        #expect(Array(kept) == first)
    }

    @Test func bufferStaysBoundedAcrossManyFrames() throws {
        var decoder = FrameDecoder(expectsPreface: false)
        let frame = Frame.message(StreamID(3), payload: [UInt8](repeating: 7, count: 100), endStream: false)
        var stream: [UInt8] = []
        for _ in 0..<2000 { FrameEncoder.encode(frame, into: &stream) }
        var decoded = 0
        var largestBuffered = 0
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + 1000)
            decoder.append(contentsOf: stream[offset..<end])
            offset = end
            largestBuffered = max(largestBuffered, decoder.bufferedByteCount)
            while let next = try decoder.nextFrame() {
                #expect(next == frame)
                decoded += 1
            }
        }
        #expect(decoded == 2000)
        // At most one partial frame (110 bytes) plus one appended chunk (1,000 bytes).
        #expect(largestBuffered <= 1110)
    }
}
