import Foundation
import HomeProto
import SwiftProtobuf
import Testing

@testable import HomeAPI

/// A remembered outcome written by hand is byte for byte what the generated encoder makes, and reads
/// back as the outcome it was.
@Suite struct StoredOutcomeTests {
    @Test(arguments: [0, 1, 127, 128, 300, 70_000])
    func aSuccessIsStoredAsTheGeneratedEncoderStoresIt(responseLength: Int) throws {
        let response = (0..<responseLength).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let stored = Outcome(encoded: .success(response)).stored
        var message = Home_V1_StoredOutcome()
        message.response = Data(response)
        #expect(stored == Array(try message.serializedData()))
        guard case .success(let bytes) = Outcome(stored: stored).kind else {
            Issue.record("a stored success read back as a failure")
            return
        }
        #expect(bytes == response)
    }
}
