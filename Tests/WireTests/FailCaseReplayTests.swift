import Foundation
import Testing
import WireTesting

/// Replays every input the fuzzer ever found troublesome (fuzz/FailCases/), through the same entry the
/// fuzzer uses, so a fixed crash stays fixed.
@Suite struct FailCaseReplayTests {
    static let failCasesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("fuzz/FailCases")

    static func failCaseNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: failCasesDirectory.path).filter { !$0.hasPrefix(".") }
            .sorted()
    }

    @Test func failCasesDirectoryHasCases() throws {
        #expect(try !Self.failCaseNames().isEmpty)
    }

    @Test(arguments: try failCaseNames())
    func replaysFailCase(name: String) throws {
        let data = try Data(contentsOf: Self.failCasesDirectory.appendingPathComponent(name))
        #expect(FrameDecoderVerifier.violations(in: Array(data)) == [])
    }
}
