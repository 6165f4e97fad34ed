import Foundation
import HomeClient
import HomeProto
import HomeService
import SwiftProtobuf
import Testing
import Wire

@testable import HomeAPI

/// The first line of authorization: a method's access, declared in proto/home/v1, checked on the
/// request's bytes before its handler runs.
@Suite struct DispatchAuthorizationTests {
    static let home = UniqueIdentifier(high: 0x0102_0304_0506_0708, low: 0x090A_0B0C_0D0E_0F10)

    @Test func theHomeIsFoundInFieldOneWhereverItLies() throws {
        var request = Home_V1_AddRoomRequest()
        request.homeID = Data(Self.home.bytes)
        request.name = "Study"
        let canonical: [UInt8] = try request.serializedBytes()
        #expect(RequestBytes.homeID(in: canonical[...])?.raw == Self.home)
        // The name first, then the home: as protobuf allows.
        let name: [UInt8] = [0x12, 5] + Array("Study".utf8)
        let homeField: [UInt8] = [0x0A, 16] + Self.home.bytes
        #expect(RequestBytes.homeID(in: (name + homeField)[...])?.raw == Self.home)
        // A repeated field: the last one wins, as the decoder has it.
        let other = [UInt8](repeating: 0xEE, count: 16)
        #expect(RequestBytes.homeID(in: ([0x0A, 16] + other + homeField)[...])?.raw == Self.home)
        // Varint, fixed64 and fixed32 fields are stepped over.
        let numbers: [UInt8] = [0x18, 0xAC, 0x02, 0x21] + [UInt8](repeating: 1, count: 8) + [0x2D, 1, 2, 3, 4]
        #expect(RequestBytes.homeID(in: (numbers + homeField)[...])?.raw == Self.home)
        // Absent, of the wrong length, or not protobuf: left to the handler's decoder.
        #expect(RequestBytes.homeID(in: name[...]) == nil)
        #expect(RequestBytes.homeID(in: ([0x0A, 3, 1, 2, 3] as [UInt8])[...]) == nil)
        #expect(RequestBytes.homeID(in: ([0x0A, 40] + Self.home.bytes)[...]) == nil)
        #expect(RequestBytes.homeID(in: ([0x0F, 0x00] as [UInt8])[...]) == nil)
        #expect(RequestBytes.homeID(in: ([0x80, 0x80, 0x80] as [UInt8])[...]) == nil)
    }

    @Test func everyMemberMethodButSubscribeNamesItsHomeInFieldOne() {
        for method in HomeAPI.methods where [.member, .administrator].contains(method.role) {
            let declared = DeclaredMethod.named(method.name)
            #expect(declared.namesHomeInFieldOne == !method.name.hasSuffix("/Subscribe"), "\(method.name)")
        }
    }

    @Test func aGuestIsRefusedAnAdministratorsMethodBeforeItsHandlerRuns() async throws {
        let server = try await HomedProcess.launch()
        let owner = server.client()
        let homeID = try await owner.addHome(named: "Guarded").id.uuid
        let home = owner.home(homeID)
        let guestAccount = try await owner.createAccount(named: "Guest").id.uuid
        _ = try await home.addUser(guestAccount)
        let guest = server.client(token: try await owner.issueToken(for: guestAccount).secret)
        // The dispatch check names the method; the store's own check would name its operation.
        await expectFailure(.permissionDenied, 17) { _ = try await guest.home(homeID).addRoom(named: "Den") }
        do {
            _ = try await guest.home(homeID).addRoom(named: "Den")
        } catch {
            #expect(
                error.message
                    == "home.v1.HomeService/AddRoom in home \"Guarded\" needs an administrator; you are a guest"
            )
        }
        // A non-member is told the home does not exist, naming the field that carried it.
        let strangerAccount = try await owner.createAccount(named: "Stranger").id.uuid
        let stranger = server.client(token: try await owner.issueToken(for: strangerAccount).secret)
        do {
            _ = try await stranger.home(homeID).addRoom(named: "Den")
            Issue.record("a stranger added a room")
        } catch {
            #expect(error.homeKitCode == 2 && error.message == "no such home")
        }
        await guest.close()
        await stranger.close()
        await owner.close()
    }
}
