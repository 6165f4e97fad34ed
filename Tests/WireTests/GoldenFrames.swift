import TestSupport
import Wire

/// The frames whose bytes docs/PROTOCOL.md shows, by the name of their `golden` block.
enum GoldenFrames {
    static let all: [(name: String, frame: Frame)] = [
        ("preface", .preface(Preface(version: 1))),
        (
            "settings",
            .settings(
                Settings([
                    Setting(.maxFrameSize, 1_048_576), Setting(.initialStreamCredit, 64),
                    Setting(.maxConcurrentStreams, 100),
                ])
            )
        ),
        (
            "call-start",
            .callStart(
                StreamID(1),
                CallStart(
                    method: "home.v1.Health/Check",
                    timeoutMilliseconds: 5000,
                    metadata: [MetadataEntry(key: "trace-id", value: "4bf92f3577b34da6")]
                )
            )
        ),
        ("message-request", .message(StreamID(1), payload: [], endStream: true)),
        ("message-response", .message(StreamID(1), payload: [0x08, 0x01], endStream: false)),
        ("call-end-ok", .callEnd(StreamID(1), .ok)),
        (
            "call-end-error",
            .callEnd(StreamID(3), CallStatus(code: .notFound, message: "no such home", details: [8, 2]))
        ),
        (
            "call-end-retryable",
            .callEnd(StreamID(5), CallStatus(code: .unavailable, message: "server is draining", isRetryable: true))
        ),
        ("cancel", .cancel(StreamID(3))),
        ("credit", .credit(StreamID(7), increment: 32)),
        ("ping", .ping(0x0102_0304_0506_0708)),
        ("pong", .pong(0x0102_0304_0506_0708)),
        ("goaway", .goAway(GoAway(lastStreamID: StreamID(7), code: .ok, message: "draining"))),
    ]

    /// The golden frames after the preface, encoded back to back.
    static var concatenatedFrames: [UInt8] {
        var bytes: [UInt8] = []
        for (_, frame) in all where frame != .preface(Preface()) {
            FrameEncoder.encode(frame, into: &bytes)
        }
        return bytes
    }
}

/// Decodes every frame in `bytes`, fed in chunks of the sizes `chunkSizes` yields, and checks that
/// nothing is left over.
func decodeAll(
    _ bytes: [UInt8],
    expectsPreface: Bool = false,
    maxFrameSize: Int = WireLimits.defaultMaxFrameSize,
    chunkSizes: () -> Int
) throws -> [Frame] {
    var decoder = FrameDecoder(maxFrameSize: maxFrameSize, expectsPreface: expectsPreface)
    var frames: [Frame] = []
    var offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + max(1, chunkSizes()))
        let chunk = Array(bytes[offset..<end])
        decoder.append(chunk.span)
        offset = end
        while let frame = try decoder.nextFrame() {
            frames.append(frame)
        }
    }
    try decoder.finish()
    return frames
}

func encoded(_ frame: Frame) -> [UInt8] {
    var bytes: [UInt8] = []
    FrameEncoder.encode(frame, into: &bytes)
    return bytes
}
