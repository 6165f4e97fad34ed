import Foundation
import HomeProto
import RPCServices
import SwiftProtobuf
import Testing

/// The server's cheaper encoder gives exactly swift-protobuf's bytes.
@Suite struct EncodedBytesTests {
    @Test func matchesSerializedBytesForNestedAndEmptyMessages() throws {
        var home = Home_V1_Home()
        home.id = Data((0..<16).map { UInt8($0) })
        home.name = "Maison é"
        home.primary = true
        home.role = .administrator
        home.roomForEntireHome = .with { $0.name = "Default Room" }
        home.rooms = (0..<40).map { index in
            .with {
                $0.id = Data(repeating: UInt8(index), count: 16)
                $0.name = "Room \(index)"
                $0.accessoryIds = [Data(repeating: 0xAB, count: 16)]
            }
        }
        #expect(try home.encodedBytes() == (try home.serializedBytes() as [UInt8]))
        #expect(try Home_V1_Home(serializedBytes: home.encodedBytes()) == home)
        #expect(try Home_V1_Home().encodedBytes() == [])
    }
}
