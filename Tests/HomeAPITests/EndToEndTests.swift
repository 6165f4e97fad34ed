import Foundation
import HomeAPI
import HomeClient
import HomeProto
import SQLite
import SwiftProtobuf
import Testing
import Wire

@testable import RPCClient

/// The whole API through the SDK against a real `homed`: every method, then a restart that must
/// bring back exactly what was acknowledged.
@Suite struct EndToEndTests {
    @Test func everyMethodWorksAndWhatWasAcknowledgedSurvivesARestart() async throws {
        let server = try await HomedProcess.launch()
        let owner = server.client()
        var covered: Set<String> = []
        func did(_ method: String) { covered.insert(method) }

        // Accounts.
        let me = try await owner.whoAmI()
        did("WhoAmI")
        #expect(me.owner)
        let alice = try await owner.createAccount(named: "Alice")
        let bob = try await owner.createAccount(named: "Bob")
        did("CreateAccount")
        #expect(try await owner.listAccounts().map(\.name) == ["Owner", "Alice", "Bob"])
        did("ListAccounts")
        let (aliceToken, aliceSecret) = try await owner.issueToken(for: alice.id.uuid)
        did("IssueToken")
        #expect(try await owner.listTokens(of: alice.id.uuid).map(\.id) == [aliceToken.id])
        did("ListTokens")

        // Homes.
        let created = try await owner.addHome(named: "My Home")
        did("AddHome")
        let home = owner.home(created.id.uuid)
        #expect(try await owner.listHomes().map(\.name) == ["My Home"])
        did("ListHomes")
        #expect(try await home.get().primary)
        did("GetHome")
        let cabin = try await owner.addHome(named: "Cabin")
        try await owner.home(cabin.id.uuid).rename(to: "Log Cabin")
        did("RenameHome")
        try await owner.home(cabin.id.uuid).makePrimary()
        did("SetPrimaryHome")
        try await home.setTimeZone("Europe/Berlin")
        did("SetHomeTimeZone")

        // Rooms and zones.
        let bedroom = try await home.addRoom(named: "卧室")
        let kitchen = try await home.addRoom(named: "Kitchen")
        did("AddRoom")
        try await home.renameRoom(kitchen.id.uuid, to: "Cook Room")
        did("RenameRoom")
        let zone = try await home.addZone(named: "Upstairs")
        did("AddZone")
        try await home.renameZone(zone.id.uuid, to: "Upper Floor")
        did("RenameZone")
        try await home.addRoom(bedroom.id.uuid, toZone: zone.id.uuid)
        try await home.addRoom(kitchen.id.uuid, toZone: zone.id.uuid)
        did("AddRoomToZone")
        try await home.removeRoom(kitchen.id.uuid, fromZone: zone.id.uuid)
        did("RemoveRoomFromZone")

        // Accessories and services, paired from simulated accessories the browser shows.
        let simulators = try await Simulators(server)
        var browser = try await owner.browseAccessories().makeAsyncIterator()
        let (lampSimulator, lamps) = try await simulators.pair(Advertised.bulb("Desk Lamp"), into: home)
        #expect(try await browser.next()?.found.name == "Desk Lamp")
        #expect(try await browser.next()?.removed.reason == .paired)
        did("BrowseAccessories")
        let lamp = lamps[0]
        let bridged = try await simulators.pair(
            Advertised.bridge("Hub", behind: [Advertised.bulb("Porch")]),
            into: home
        )
        .accessories
        let plug = try await simulators.pair(Advertised.outletWithSensor("Plug"), into: home).accessories[0]
        did("AddAccessory")
        #expect(bridged.count == 2 && bridged[1].bridged && bridged[1].bridgeID == bridged[0].id)
        try await home.renameAccessory(lamp.id.uuid, to: "Reading Lamp")
        did("RenameAccessory")
        try await home.assignAccessory(lamp.id.uuid, toRoom: bedroom.id.uuid)
        did("AssignAccessoryToRoom")
        try await home.identifyAccessory(lamp.id.uuid)
        #expect(await lampSimulator.identifyCount == 1)
        did("IdentifyAccessory")
        try await home.unblockAccessory(bridged[0].id.uuid)
        did("UnblockAccessory")
        await expectFailure(.failedPrecondition, 81) { try await home.unblockAccessory(lamp.id.uuid) }
        let outletService = plug.services[0]
        try await home.renameService(outletService.id.uuid, to: "Desk Plug")
        did("RenameService")
        let associated = try await home.updateAssociatedServiceType(outletService.id.uuid, to: Advertised.lightbulb)
        #expect(associated.associatedType == Advertised.lightbulb)
        did("UpdateAssociatedServiceType")
        let bulbs = try await home.services(ofTypes: [Advertised.lightbulb])
        #expect(bulbs.count == 2)
        did("ListServicesWithTypes")

        // Characteristics.
        let brightness = lamp.characteristic(Advertised.brightness)
        let written = try await home.writeCharacteristic(brightness.id.uuid, .int(75))
        did("WriteCharacteristic")
        #expect(await lampSimulator.values[brightness.id.uuid] == .int(75))
        let read = try await home.readCharacteristic(brightness.id.uuid)
        #expect(read.value.signedValue == 75 && read.valueTimeMs == written && read.reachable)
        #expect(try await home.readCharacteristic(brightness.id.uuid, fresh: true).value.signedValue == 75)
        did("ReadCharacteristic")
        try await home.enableNotification(brightness.id.uuid)
        did("EnableNotification")
        let metadata = try await home.characteristicMetadata(brightness.id.uuid)
        #expect(metadata.metadata.maximumValue == 100 && metadata.properties.writable && metadata.notificationEnabled)
        did("ReadCharacteristicMetadata")

        // Service groups.
        let group = try await home.addServiceGroup(named: "Lights")
        did("AddServiceGroup")
        try await home.renameServiceGroup(group.id.uuid, to: "All Lights")
        did("RenameServiceGroup")
        try await home.addService(lamp.services[0].id.uuid, toGroup: group.id.uuid)
        try await home.addService(bridged[1].services[0].id.uuid, toGroup: group.id.uuid)
        did("AddServiceToGroup")
        try await home.removeService(bridged[1].services[0].id.uuid, fromGroup: group.id.uuid)
        did("RemoveServiceFromGroup")

        // Action sets.
        let evening = try await home.addActionSet(named: "Evening")
        did("AddActionSet")
        try await home.renameActionSet(evening.id.uuid, to: "Movie Night")
        did("RenameActionSet")
        let on = lamp.characteristic(Advertised.on)
        let action = UUID()
        try await home.addAction(writing: .bool(true), to: on.id.uuid, in: evening.id.uuid, actionID: action)
        let dimAction = UUID()
        try await home.addAction(writing: .int(10), to: brightness.id.uuid, in: evening.id.uuid, actionID: dimAction)
        did("AddAction")
        try await home.updateTargetValue(of: dimAction, in: evening.id.uuid, to: .int(20))
        // Without an idempotency key (as the C SDK and load clients send it) the request is read
        // from its bytes by the method's shortcut: the same change and the same answer.
        let keyless = try await owner.call(
            "home.v1.HomeService/UpdateActionTargetValue",
            Home_V1_UpdateActionTargetValueRequest.with {
                $0.homeID = created.id
                $0.actionSetID = evening.id
                $0.actionID = dimAction.data
                $0.targetValue = .int(30)
            },
            returning: Home_V1_UpdateActionTargetValueResponse.self
        )
        #expect(keyless.actionSet.name == "Movie Night")
        #expect(keyless.actionSet.actions.map(\.targetValue) == [.bool(true), .int(30)])
        did("UpdateActionTargetValue")
        try await home.removeAction(dimAction, from: evening.id.uuid)
        did("RemoveAction")
        try await home.executeActionSet(evening.id.uuid)
        #expect(await lampSimulator.values[on.id.uuid] == .bool(true))
        did("ExecuteActionSet")

        // Triggers.
        let fireDate = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.up) * 60 + 3600)
        let trigger = try await home.addTrigger(named: "Dusk", fireDate: fireDate, recurrence: Recurrence(1, .day))
        did("AddTrigger")
        try await home.renameTrigger(trigger.id.uuid, to: "Sunset")
        did("RenameTrigger")
        try await home.addActionSet(evening.id.uuid, toTrigger: trigger.id.uuid)
        did("AddActionSetToTrigger")
        #expect(try await home.enableTrigger(trigger.id.uuid).enabled)
        did("EnableTrigger")
        try await home.updateFireDate(of: trigger.id.uuid, to: fireDate.addingTimeInterval(600))
        did("UpdateTriggerFireDate")
        try await home.updateRecurrence(of: trigger.id.uuid, to: Recurrence(2, .hour))
        did("UpdateTriggerRecurrence")
        let spare = try await home.addActionSet(named: "Spare")
        try await home.addAction(writing: .bool(false), to: on.id.uuid, in: spare.id.uuid)
        try await home.addActionSet(spare.id.uuid, toTrigger: trigger.id.uuid)
        try await home.removeActionSet(spare.id.uuid, fromTrigger: trigger.id.uuid)
        did("RemoveActionSetFromTrigger")

        // Users.
        let aliceUser = try await home.addUser(alice.id.uuid)
        let bobUser = try await home.addUser(bob.id.uuid)
        did("AddUser")
        #expect(try await home.updateUserAccess(aliceUser.id.uuid, administrator: true).administrator)
        did("UpdateUserAccess")
        try await home.removeUser(bobUser.id.uuid)
        did("RemoveUser")
        #expect(try await home.listUsers().map(\.name) == ["Owner", "Alice"])
        did("ListUsers")

        // Removals, each of an object made for it.
        try await home.removeTrigger(try await home.addTrigger(named: "Gone", fireDate: fireDate).id.uuid)
        did("RemoveTrigger")
        try await home.removeActionSet(spare.id.uuid)
        did("RemoveActionSet")
        try await home.removeServiceGroup(try await home.addServiceGroup(named: "Temporary").id.uuid)
        did("RemoveServiceGroup")
        try await home.removeZone(try await home.addZone(named: "Garden").id.uuid)
        did("RemoveZone")
        try await home.removeRoom(try await home.addRoom(named: "Attic").id.uuid)
        did("RemoveRoom")
        try await home.removeAccessory(
            try await simulators.pair(Advertised.bulb("Spare Bulb"), into: home).accessories[0].id.uuid
        )
        did("RemoveAccessory")
        #expect(try await owner.home(cabin.id.uuid).remove())
        did("RemoveHome")

        // A backup holds everything acknowledged so far: opened on its own, the home is at the
        // revision the server shows, with the same rooms. It goes to the backup directory (by
        // default the store's), by file name only, and never over an existing file.
        let backupPath = server.directory.appendingPathComponent("backup.sqlite").path
        let backup = try await owner.backupStore(named: "backup.sqlite")
        #expect(backup.path == backupPath && backup.bytes > 0)
        did("BackupStore")
        let shown = try await home.get()
        let copy = try Database(path: backupPath)
        let homeKey = SQLValue.blob(Array(created.id))
        let copiedRevision = try copy.prepare("SELECT max(last_revision) FROM event_batch WHERE home = ?").query([
            homeKey
        ])
        #expect(copiedRevision.first?.first == .integer(Int64(shown.revision)))
        let copiedRooms = try copy.prepare("SELECT count(*) FROM room WHERE home = ?").query([homeKey])
        // The room table holds the room for the entire home too.
        #expect(copiedRooms.first?.first == .integer(Int64(shown.rooms.count + 1)))
        await expectFailure(.alreadyExists, 1) { _ = try await owner.backupStore(named: "backup.sqlite") }
        let unprintable = [
            "a\nb.sqlite", "\u{1B}[31mred.sqlite", "evil\u{202E}etilqs.exe", "   ", " lead.sqlite", "trail.sqlite\t",
            "nul\u{0}.sqlite", "zero\u{200B}width.sqlite",
        ]
        for name in [backupPath, "../backup.sqlite", ".hidden", "", String(repeating: "b", count: 256)] + unprintable {
            await expectFailure(.invalidArgument, 3, name) { _ = try await owner.backupStore(named: name) }
        }
        #expect(!FileManager.default.fileExists(atPath: server.directory.appendingPathComponent(".hidden").path))

        // A revoked token stops working at once, on a connection that is already authenticated too.
        let aliceClient = server.client(token: aliceSecret)
        #expect(try await aliceClient.listHomes().map(\.name) == ["My Home"])
        // Alice follows the home: its state, then the owner's next change (SubscriptionTests covers
        // every event kind).
        var changes = try await opened(aliceClient, ChangeOptions(homes: [home.id]))
        _ = try await home.addRoom(named: "Pantry")
        #expect(try await changes.next()?.roomAdded.room.name == "Pantry")
        did("Subscribe")
        try await owner.revokeToken(aliceToken.id.uuid)
        did("RevokeToken")
        do {
            _ = try await aliceClient.listHomes()
            Issue.record("a revoked token still works")
        } catch {
            #expect(error.status == .unauthenticated)
            #expect(error.message == "the token this connection authenticated with was revoked")
        }
        await aliceClient.close()
        // On a new connection, the revoked token is refused like any other (not "authenticate first").
        let revokedClient = server.client(token: aliceSecret)
        do {
            _ = try await revokedClient.listHomes()
            Issue.record("a revoked token authenticated a new connection")
        } catch {
            #expect(error.status == .unauthenticated)
            #expect(error.message == "the bearer token was not accepted: it is unknown or was revoked")
        }
        await revokedClient.close()

        let allMethods = Set(HomeAPI.methods.map { String($0.name.split(separator: "/").last!) })
        #expect(covered == allMethods, "not called: \(allMethods.subtracting(covered).sorted())")

        // Everything acknowledged is there after a restart; notification enablement is not kept, and
        // accessories are unreachable until they attach again.
        var before = try await home.get()
        before.accessories = before.accessories.map(Self.withoutNotifications).map {
            var accessory = $0
            accessory.reachable = false
            return accessory
        }
        // One reachability change per accessory, made at start-up.
        before.revision += UInt64(before.accessories.count)
        await owner.close()
        await simulators.close()
        try await server.restart()
        let again = server.client()
        let after = try await again.home(created.id.uuid).get()
        #expect(after == before)
        #expect(try await again.listHomes().map(\.name) == ["My Home"])
        await again.close()
    }

    /// Backups go to the directory the operator names, by file name only; a directory that does not
    /// exist stops the start before the store is opened.
    @Test func backupsGoToTheBackupDirectory() async throws {
        let backups = FileManager.default.temporaryDirectory.appendingPathComponent("backups-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: backups, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: backups) }
        let server = try await HomedProcess.launch(arguments: ["--backup-directory", backups.path])
        let owner = server.client()
        let written = try await owner.backupStore(named: "nightly.sqlite")
        #expect(written.path == backups.appendingPathComponent("nightly.sqlite").path)
        #expect(FileManager.default.fileExists(atPath: written.path))
        await owner.close()
        server.stop()

        let refused = Process()
        refused.executableURL = URL(fileURLWithPath: HomedProcess.executablePath)
        refused.arguments = [
            "--port", "0", "--store", server.storePath, "--backup-directory", "/nonexistent-homerpc-directory",
        ]
        let errors = Pipe()
        refused.standardError = errors
        refused.standardOutput = FileHandle.nullDevice
        try refused.run()
        refused.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(refused.terminationStatus == 1)
        #expect(message.contains("--backup-directory /nonexistent-homerpc-directory is not a directory"), "\(message)")
    }

    /// A client whose server restarted finds its connection closed on its next call; nothing was
    /// sent on it, so the call goes on a new connection instead of failing (reads included, which
    /// are not retried otherwise).
    @Test func aClientCarriesOnAfterItsServerRestarts() async throws {
        let server = try await HomedProcess.launch()
        let client = server.client()
        _ = try await client.addHome(named: "Home")
        try await server.restart()
        #expect(try await client.listHomes().map(\.name) == ["Home"])
        await client.close()
    }

    /// Stream ids never repeat on a connection: a client whose connection used the last one
    /// carries on with reads and mutations on a new connection, nothing is applied twice, and a
    /// subscription open on the old connection goes on there.
    @Test func aClientCarriesOnPastTheLastStreamIDOfItsConnection() async throws {
        let server = try await HomedProcess.launch()
        var connection = ClientConnection.Configuration()
        connection.firstStreamID = UInt32.max - 3
        let client = HomeClient(endpoint: server.endpoint, token: server.ownerToken, connection: connection)
        _ = try await client.addHome(named: "One")
        // WhoAmI, then Subscribe: the connection's last stream id but one.
        var events = client.changes(ChangeOptions(snapshot: true, includeOwnChanges: true)).makeAsyncIterator()
        #expect(try await events.next()?.snapshot.home.name == "One")
        _ = try await client.addHome(named: "Two")  // the last id
        #expect(try await client.listHomes().map(\.name) == ["One", "Two"])  // on a new connection
        let info = try await client.call(
            "home.v1.ServerInfo/Get",
            Home_V1_ServerInfoRequest(),
            returning: Home_V1_ServerInfoResponse.self
        )
        #expect(info.connectionsOpen == 2, "the old connection, with its subscription, was closed")
        #expect(try await events.next()?.homeAdded.home.name == "Two")
        await client.close()
        #expect(server.stop() == 0)
    }

    static func withoutNotifications(_ accessory: Accessory) -> Accessory {
        var accessory = accessory
        for s in accessory.services.indices {
            for c in accessory.services[s].characteristics.indices {
                accessory.services[s].characteristics[c].notificationEnabled = false
            }
        }
        return accessory
    }
}
