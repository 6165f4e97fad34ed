import HomeProto
import SwiftProtobuf
import Testing

/// The generated messages link and keep their field numbers: `homekit_code` is field 1, a varint.
@Suite struct ErrorDetailsTests {
    @Test func encodesHomeKitCodeAsFieldOne() throws {
        var details = Home_V1_ErrorDetails()
        details.homekitCode = 17
        details.homekitName = "InsufficientPrivileges"
        let bytes: [UInt8] = try details.serializedBytes()
        #expect(bytes.prefix(2) == [0x08, 17])
        #expect(try Home_V1_ErrorDetails(serializedBytes: bytes) == details)
    }

    @Test func healthStatusNumbersAreStable() {
        #expect(Home_V1_HealthCheckResponse.ServingStatus.serving.rawValue == 1)
        #expect(Home_V1_HealthCheckResponse.ServingStatus.notServing.rawValue == 2)
    }
}
