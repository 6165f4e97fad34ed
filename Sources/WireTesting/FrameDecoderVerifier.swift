import Wire

/// Checks the decoder's invariants on arbitrary input; shared by the libFuzzer target (fuzz/) and the
/// unit test that replays fuzz/FailCases/.
///
/// For any input the decoder must not crash, and:
/// - fed whole and fed in chunks, it yields the same frames and the same error, also when CALL_START
///   and MESSAGE frames are taken through their headers as the server takes them;
/// - every frame it yields re-encodes to bytes that decode to the same frame.
public enum FrameDecoderVerifier {
    /// A small limit so that fuzzed lengths reach `frameTooLarge` often.
    static let maxFrameSize = WireLimits.minimumMaxFrameSize

    /// Returns a description of each broken invariant; empty when all hold.
    public static func violations(in input: [UInt8]) -> [String] {
        guard let control = input.first else { return [] }
        let bytes = Array(input.dropFirst())
        // The first byte chooses the mode: whether a preface is expected, and the chunk size.
        let expectsPreface = control & 0x80 != 0
        let chunkSize = Int(control & 0x7F) + 1

        let whole = decode(bytes, expectsPreface: expectsPreface, chunkSize: max(1, bytes.count))
        let chunked = decode(bytes, expectsPreface: expectsPreface, chunkSize: chunkSize)
        let byHeader = decode(bytes, expectsPreface: expectsPreface, chunkSize: chunkSize, takingCallFrames: true)
        var problems: [String] = []
        if whole.frames != chunked.frames || whole.error != chunked.error {
            problems.append("chunk size \(chunkSize) changed the result: \(whole) vs \(chunked)")
        }
        if whole != byHeader {
            problems.append("taking call frames by header changed the result: \(whole) vs \(byHeader)")
        }
        for frame in whole.frames {
            var encoded: [UInt8] = []
            FrameEncoder.encode(frame, into: &encoded)
            let isPreface: Bool
            if case .preface = frame { isPreface = true } else { isPreface = false }
            let again = decode(encoded, expectsPreface: isPreface, chunkSize: encoded.count)
            if again.frames != [frame] || again.error != nil {
                problems.append("\(frame) re-encoded to \(encoded) decodes as \(again)")
            }
        }
        return problems
    }

    struct Outcome: Equatable {
        var frames: [Frame] = []
        var error: WireError?
    }

    static func decode(
        _ bytes: [UInt8],
        expectsPreface: Bool,
        chunkSize: Int,
        takingCallFrames: Bool = false
    ) -> Outcome {
        var decoder = FrameDecoder(maxFrameSize: maxFrameSize, expectsPreface: expectsPreface)
        var outcome = Outcome()
        var offset = 0
        do {
            repeat {
                let end = min(bytes.count, offset + chunkSize)
                decoder.append(contentsOf: bytes[offset..<end])
                offset = end
                while true {
                    if takingCallFrames, let header = try decoder.nextCompleteHeader() {
                        if header.type == .callStart {
                            outcome.frames.append(.callStart(header.streamID, try decoder.takeCallStart(header)))
                            continue
                        }
                        if header.type == .message {
                            let payload = Array(decoder.takeMessagePayload(header))
                            let endStream = header.flags.contains(.endStream)
                            outcome.frames.append(.message(header.streamID, payload: payload, endStream: endStream))
                            continue
                        }
                    }
                    guard let frame = try decoder.nextFrame() else { break }
                    outcome.frames.append(frame)
                }
            } while offset < bytes.count
            try decoder.finish()
        } catch {
            outcome.error = error
        }
        return outcome
    }
}
