import Foundation
import Testing
import Wire

/// docs/PROTOCOL.md is the contract for other implementations: its hex examples must be exactly what
/// the encoder writes and the decoder reads.
@Suite struct ProtocolDocumentTests {
    static func documentedExamples() throws -> [String: [UInt8]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        var examples: [String: [UInt8]] = [:]
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
        while let line = lines.popFirst() {
            guard line.hasPrefix("<!-- golden: ") else { continue }
            let name = line.dropFirst("<!-- golden: ".count).prefix { $0 != " " }
            #expect(lines.popFirst() == "```text")
            var bytes: [UInt8] = []
            while let hexLine = lines.popFirst(), hexLine != "```" {
                for pair in hexLine.split(separator: " ") {
                    bytes.append(try #require(UInt8(pair, radix: 16), "bad hex \(pair) in \(name)"))
                }
            }
            examples[String(name)] = bytes
        }
        return examples
    }

    @Test func everyGoldenFrameIsDocumented() throws {
        let examples = try Self.documentedExamples()
        #expect(Set(examples.keys) == Set(GoldenFrames.all.map(\.name)))
    }

    @Test(arguments: GoldenFrames.all.map(\.name))
    func documentedBytesMatchEncoderAndDecoder(name: String) throws {
        let documented = try #require(try Self.documentedExamples()[name])
        let frame = try #require(GoldenFrames.all.first { $0.name == name }?.frame)
        #expect(encoded(frame) == documented)
        let isPreface = frame == .preface(Preface())
        let decoded = try decodeAll(documented, expectsPreface: isPreface) { documented.count }
        #expect(decoded == [frame])
    }
}
