import Foundation
import HomeClient
import HomeProto
import RPCClient
import SwiftProtobuf
import Testing
import Wire

/// The payload's case name: "roomAdded", "snapshot"...
func kindName(_ event: HomeEvent) -> String {
    guard let payload = event.payload else { return "none" }
    return String(String(describing: payload).prefix { $0 != "(" })
}

/// Reads events until `count` arrived (the suite's time limit stops a stream that stalls).
func take(_ count: Int, from iterator: inout HomeChanges.Iterator) async throws -> [HomeEvent] {
    var events: [HomeEvent] = []
    while events.count < count, let event = try await iterator.next() { events.append(event) }
    return events
}

/// A stream that is open: it starts with a snapshot of each named home, taken here. (A stream
/// opens on its first `next()`; changes made before that are not part of it.)
func opened(_ client: HomeClient, _ options: ChangeOptions) async throws -> HomeChanges.Iterator {
    var options = options
    options.snapshot = true
    var iterator = client.changes(options).makeAsyncIterator()
    let snapshots = try await take(options.homes.count, from: &iterator)
    #expect(snapshots.map(kindName) == Array(repeating: "snapshot", count: options.homes.count))
    return iterator
}

/// Change streams against a real `homed`, through the SDK.
@Suite(.serialized, .timeLimit(.minutes(3))) struct SubscriptionTests {
    /// The owner, an administrator (the subscriber) with a second connection, and a home they share.
    struct Setup {
        let server: HomedProcess
        let owner: HomeClient
        let admin: HomeClient
        let adminAgain: HomeClient
        let adminAccount: UUID
        let home: HomeHandle
        let simulators: Simulators

        init(arguments: [String] = []) async throws {
            server = try await HomedProcess.launch(arguments: arguments)
            owner = server.client()
            let account = try await owner.createAccount(named: "Ada")
            let (_, secret) = try await owner.issueToken(for: account.id.uuid)
            admin = server.client(token: secret)
            adminAgain = server.client(token: secret)
            adminAccount = account.id.uuid
            // Ada's own home first, so that the shared one is not her primary home by default.
            _ = try await admin.addHome(named: "Ada's Flat")
            home = owner.home(try await owner.addHome(named: "Shared").id.uuid)
            try await home.addUser(account.id.uuid, administrator: true)
            simulators = try await Simulators(server)
        }

        func close() async {
            for client in [owner, admin, adminAgain] { await client.close() }
            await simulators.close()
        }
    }

    @Test func aSubscriberSeesEveryKindTheControllerAPICausesWithItsContent() async throws {
        let setup = try await Setup()
        let home = setup.home
        let ownerUser = try await home.get().currentUserID
        var stream = try await opened(setup.admin, ChangeOptions(homes: [home.id]))
        let lamp = try await setup.simulators.pair(Advertised.bulb("Lamp"), into: home).accessories[0]
        let first = try await take(1, from: &stream)
        #expect(first.map(kindName) == ["accessoryAdded"])
        #expect(first.first?.accessoryAdded.accessory.services.first?.characteristics.count == 2)
        let brightness = lamp.characteristic(Advertised.brightness).id.uuid
        try await setup.admin.home(home.id).enableNotification(brightness)

        try await home.rename(to: "Shared Home")
        try await home.setTimeZone("Europe/Berlin")
        let den = try await home.addRoom(named: "Den")
        try await home.renameRoom(den.id.uuid, to: "Study")
        let zone = try await home.addZone(named: "Upstairs")
        try await home.addRoom(den.id.uuid, toZone: zone.id.uuid)
        try await home.removeRoom(den.id.uuid, fromZone: zone.id.uuid)
        try await home.renameZone(zone.id.uuid, to: "Top Floor")
        try await home.renameAccessory(lamp.id.uuid, to: "Desk Lamp")
        try await home.assignAccessory(lamp.id.uuid, toRoom: den.id.uuid)
        let bulbService = lamp.services[0].id.uuid
        try await home.renameService(bulbService, to: "Reading Light")
        let plug = try await setup.simulators.pair(Advertised.outletWithSensor("Plug"), into: home).accessories[0]
        try await home.updateAssociatedServiceType(plug.services[0].id.uuid, to: "00000043-0000-1000-8000-0026BB765291")
        try await home.writeCharacteristic(brightness, .int(80))
        // Not followed: no notifications on it.
        try await home.writeCharacteristic(lamp.characteristic(Advertised.on).id.uuid, .bool(true))
        let group = try await home.addServiceGroup(named: "Lights")
        try await home.addService(bulbService, toGroup: group.id.uuid)
        try await home.removeService(bulbService, fromGroup: group.id.uuid)
        try await home.renameServiceGroup(group.id.uuid, to: "All Lights")
        try await home.removeServiceGroup(group.id.uuid)
        let scene = try await home.addActionSet(named: "Reading")
        try await home.addAction(writing: .int(100), to: brightness, in: scene.id.uuid)
        try await home.renameActionSet(scene.id.uuid, to: "Reading Time")
        let fireDate = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.up) * 60 + 3600)
        let trigger = try await home.addTrigger(named: "Evening", fireDate: fireDate)
        try await home.renameTrigger(trigger.id.uuid, to: "Dusk")
        try await home.addActionSet(scene.id.uuid, toTrigger: trigger.id.uuid)
        try await home.enableTrigger(trigger.id.uuid)
        try await home.removeTrigger(trigger.id.uuid)
        try await home.removeActionSet(scene.id.uuid)
        let guest = try await setup.owner.createAccount(named: "Gus")
        let guestUser = try await home.addUser(guest.id.uuid)
        try await home.updateUserAccess(guestUser.id.uuid, administrator: true)
        try await home.removeUser(guestUser.id.uuid)
        try await home.removeAccessory(plug.id.uuid)
        try await home.removeRoom(den.id.uuid)
        try await home.removeZone(zone.id.uuid)
        // Ada's own change on another connection is not an echo; on the stream's own it would be.
        try await setup.adminAgain.home(home.id).makePrimary()
        _ = try await home.remove()

        let expected = [
            "homeNameUpdated", "homeTimeZoneUpdated", "roomAdded", "roomNameUpdated", "zoneAdded",
            "roomAddedToZone", "roomRemovedFromZone", "zoneNameUpdated", "accessoryNameUpdated",
            "roomForAccessoryUpdated", "serviceNameUpdated", "accessoryAdded", "associatedServiceTypeUpdated",
            "characteristicValueUpdated", "serviceGroupAdded", "serviceAddedToGroup", "serviceRemovedFromGroup",
            "serviceGroupNameUpdated", "serviceGroupRemoved", "actionSetAdded", "actionSetActionsUpdated",
            "actionSetNameUpdated", "triggerAdded", "triggerNameUpdated", "triggerUpdated", "triggerUpdated",
            "triggerRemoved", "actionSetRemoved", "userAdded", "accessControlUpdated", "userRemoved",
            "accessoryRemoved", "roomForAccessoryUpdated", "roomRemoved", "zoneRemoved", "primaryHomeUpdated",
            "homeRemoved",
        ]
        var events = try await take(expected.count, from: &stream)
        #expect(events.map(kindName) == expected)
        // The home is gone: the stream ends.
        #expect(try await stream.next() == nil)

        // Content: each event carries its objects in full, its revision in order, and who did it.
        let revisions = events.map(\.revision)
        #expect(revisions == revisions.sorted() && Set(revisions).count == revisions.count)
        #expect(events.allSatisfy { $0.homeID == home.id.data && !$0.own })
        // A member is named by their id in the home, never by their account's.
        let owner = try await setup.owner.whoAmI().id
        #expect(events[0].initiator.userID == ownerUser && ownerUser != owner && ownerUser.count == 16)
        #expect(events[0].homeNameUpdated.name == "Shared Home")
        #expect(events[1].homeTimeZoneUpdated.timeZone == "Europe/Berlin")
        #expect(events[2].roomAdded.room.name == "Den" || events[2].roomAdded.room.name == "Study")
        #expect(events[2].roomAdded.room.id == den.id)
        #expect(events[3].roomNameUpdated.name == "Study")
        #expect(events[5].roomAddedToZone.roomID == den.id && events[5].roomAddedToZone.zoneID == zone.id)
        #expect(events[9].roomForAccessoryUpdated.roomID == den.id)
        #expect(events[11].accessoryAdded.accessory.name == "Plug")
        let value = events[13].characteristicValueUpdated
        #expect(value.characteristicID == brightness.data && value.value.signedValue == 80)
        #expect(value.serviceID == bulbService.data && value.accessoryID == lamp.id)
        #expect(events[20].actionSetActionsUpdated.actionSet.actions.count == 1)
        #expect(events[25].triggerUpdated.trigger.enabled)
        #expect(events[28].userAdded.user.name == "Gus")
        #expect(events[29].accessControlUpdated.user.administrator)
        #expect(events[35].primaryHomeUpdated.homeID == home.id.data)
        events.removeAll()
        await setup.close()
    }

    @Test func ownChangesAreEchoedOnlyWhenAskedFor() async throws {
        let setup = try await Setup()
        let home = setup.admin.home(setup.home.id)
        var quiet = try await opened(setup.admin, ChangeOptions(homes: [home.id]))
        var echoing = try await opened(setup.adminAgain, ChangeOptions(homes: [home.id], includeOwnChanges: true))
        // Ada's change through `admin` (the quiet stream's connection), then one through `adminAgain`.
        _ = try await home.addRoom(named: "Mine")
        _ = try await setup.adminAgain.home(home.id).addRoom(named: "Other Connection")
        let quietEvents = try await take(1, from: &quiet)
        #expect(quietEvents.map { $0.roomAdded.room.name } == ["Other Connection"])
        #expect(quietEvents.first?.own == false)
        let echoed = try await take(2, from: &echoing)
        #expect(echoed.map { $0.roomAdded.room.name } == ["Mine", "Other Connection"])
        #expect(echoed.map(\.own) == [false, true])
        await setup.close()
    }

    @Test func resumeGivesExactlyTheMissedChangesOrAResyncAlsoAfterARestart() async throws {
        let setup = try await Setup(arguments: ["--max-events-per-home", "8"])
        let home = setup.home
        var stream = setup.admin.changes(ChangeOptions(homes: [home.id], snapshot: true)).makeAsyncIterator()
        let snapshot = try await take(1, from: &stream)[0]
        #expect(kindName(snapshot) == "snapshot")
        #expect(snapshot.snapshot.home.users.count == 2)
        let start = snapshot.revision
        for index in 1...5 { _ = try await home.addRoom(named: "Room \(index)") }

        // Resume after the snapshot: exactly the five, in order.
        var resumed = setup.adminAgain.changes(ChangeOptions(homes: [home.id], resumeFrom: [home.id: start]))
            .makeAsyncIterator()
        let five = try await take(5, from: &resumed)
        #expect(five.map { $0.roomAdded.room.name } == (1...5).map { "Room \($0)" })
        #expect(five.map(\.revision) == (1...5).map { start + UInt64($0) })
        // The first stream got the same five.
        #expect(try await take(5, from: &stream).map(\.revision) == five.map(\.revision))

        // More than the server retains: resuming from the start gets a Resync with the whole home.
        for index in 6...15 { _ = try await home.addRoom(named: "Room \(index)") }
        var tooOld = setup.adminAgain.changes(ChangeOptions(homes: [home.id], resumeFrom: [home.id: start]))
            .makeAsyncIterator()
        let resync = try await take(1, from: &tooOld)[0]
        #expect(kindName(resync) == "resync")
        #expect(resync.resync.reason == .resumePointNotRetained)
        #expect(resync.resync.home.rooms.count == 15)
        #expect(resync.revision == start + 15)

        // After a restart, the retained changes resume exactly; older points still resync.
        try await setup.server.restart()
        _ = try await home.addRoom(named: "After Restart")
        var afterRestart = setup.adminAgain.changes(
            ChangeOptions(homes: [home.id], resumeFrom: [home.id: start + 13])
        ).makeAsyncIterator()
        let three = try await take(3, from: &afterRestart)
        #expect(three.map { $0.roomAdded.room.name } == ["Room 14", "Room 15", "After Restart"])
        var stale = setup.adminAgain.changes(ChangeOptions(homes: [home.id], resumeFrom: [home.id: start]))
            .makeAsyncIterator()
        #expect(try await take(1, from: &stale).first?.resync.reason == .resumePointNotRetained)
        // The first stream reconnected by itself and resumed where it was: no gap, no repeat.
        let continued = try await take(11, from: &stream)
        #expect(continued.map(\.revision) == (6...16).map { start + UInt64($0) })
        await setup.close()
    }

    @Test func snapshotThenChangesRebuildsTheHomeUnderConcurrentWrites() async throws {
        let setup = try await Setup()
        let home = setup.home
        var stream = setup.admin.changes(ChangeOptions(homes: [home.id], snapshot: true)).makeAsyncIterator()
        // The writer starts before the snapshot is taken and goes on while events flow.
        let writer = Task {
            var random = SystemRandomNumberGenerator()
            var rooms: [UUID] = []
            var zones: [UUID] = []
            for step in 0..<150 {
                switch Int.random(in: 0..<6, using: &random) {
                case 0, 1:
                    rooms.append(try await home.addRoom(named: "Room \(step)").id.uuid)
                case 2 where !rooms.isEmpty:
                    try await home.renameRoom(rooms.randomElement(using: &random)!, to: "Renamed \(step)")
                case 3 where !rooms.isEmpty:
                    try await home.removeRoom(rooms.remove(at: Int.random(in: 0..<rooms.count, using: &random)))
                case 4:
                    zones.append(try await home.addZone(named: "Zone \(step)").id.uuid)
                case 5 where !zones.isEmpty && !rooms.isEmpty:
                    let zone = zones.randomElement(using: &random)!
                    _ = try? await home.addRoom(rooms.randomElement(using: &random)!, toZone: zone)
                default:
                    try await home.rename(to: "Home \(step)")
                }
            }
        }
        var model = HomeModel()
        var revision: UInt64 = 0
        try await writer.value
        let final = try await home.get()
        while revision < final.revision, let event = try await stream.next() {
            model.apply(event)
            revision = event.revision
        }
        #expect(revision == final.revision)
        #expect(model == HomeModel(final))
        await setup.close()
    }

    /// A bridge is never announced on its own (HomeKit's rule), yet its renames, moves and removal
    /// arrive: its first accessory's added event carries it, so that the events still rebuild the home.
    @Test func eventsRebuildAHomeWithABridgeRenamedMovedAndRemoved() async throws {
        let setup = try await Setup()
        let home = setup.home
        var stream = setup.admin.changes(ChangeOptions(homes: [home.id], snapshot: true)).makeAsyncIterator()
        var model = HomeModel()
        var revision: UInt64 = 0
        func catchUp() async throws {
            let state = try await home.get()
            while revision < state.revision, let event = try await stream.next() {
                model.apply(event)
                revision = event.revision
            }
            #expect(model == HomeModel(state))
        }
        let bridgeDescription = Advertised.bridge("Hub", behind: [Advertised.bulb("Porch"), Advertised.bulb("Path")])
        let (simulator, added) = try await setup.simulators.pair(bridgeDescription, into: home)
        try await catchUp()
        #expect(model.accessories.count == 3)
        let bridge = added[0].id.uuid
        let garage = try await home.addRoom(named: "Garage").id.uuid
        try await home.renameAccessory(bridge, to: "Garage Hub")
        try await home.assignAccessory(bridge, toRoom: garage)
        try await home.renameAccessory(added[1].id.uuid, to: "Front Porch")
        try await catchUp()
        try await home.removeAccessory(bridge)
        try await catchUp()
        #expect(model.accessories.isEmpty)
        await simulator.stop()
        await setup.close()
    }

    @Test func aStreamOfEveryHomeFollowsHomesTheAccountCreatesOrJoins() async throws {
        let setup = try await Setup()
        var stream = setup.admin.changes(ChangeOptions(snapshot: true)).makeAsyncIterator()
        let snapshots = try await take(2, from: &stream)
        #expect(Set(snapshots.map { $0.snapshot.home.name }) == ["Ada's Flat", "Shared"])
        _ = try await setup.adminAgain.addHome(named: "New Place")
        let joined = setup.owner.home(try await setup.owner.addHome(named: "Owner's Loft").id.uuid)
        try await joined.addUser(setup.adminAccount)
        _ = try await joined.addRoom(named: "Loft Room")
        let events = try await take(3, from: &stream)
        #expect(events.map(kindName) == ["homeAdded", "homeAdded", "roomAdded"])
        #expect(events[0].homeAdded.home.name == "New Place")
        #expect(events[1].homeAdded.home.name == "Owner's Loft" && events[1].homeAdded.home.users.count == 2)
        #expect(events[1].initiator.userID == events[1].homeAdded.home.users.first { $0.owner }?.id)
        #expect(events[2].homeID == joined.id.data && events[2].roomAdded.room.name == "Loft Room")
        await setup.close()
    }

    @Test func aRemovedGuestsStreamStopsForThatHomeOnly() async throws {
        let setup = try await Setup()
        let guest = try await setup.owner.createAccount(named: "Gus")
        let (_, secret) = try await setup.owner.issueToken(for: guest.id.uuid)
        let guestClient = setup.server.client(token: secret)
        let guestUser = try await setup.home.addUser(guest.id.uuid)
        let other = setup.owner.home(try await setup.owner.addHome(named: "Other").id.uuid)
        let guestElsewhere = try await other.addUser(guest.id.uuid)
        // An account is a different user in each of its homes.
        #expect(guestUser.id != guestElsewhere.id && guestUser.id != guest.id)
        var guestStream = try await opened(guestClient, ChangeOptions(homes: [setup.home.id, other.id]))
        var adminStream = try await opened(setup.admin, ChangeOptions(homes: [setup.home.id]))
        _ = try await setup.home.addRoom(named: "Before")
        try await setup.home.removeUser(guestUser.id.uuid)
        _ = try await setup.home.addRoom(named: "After")
        _ = try await other.addRoom(named: "Elsewhere")
        let seen = try await take(3, from: &guestStream)
        #expect(seen.map(kindName) == ["roomAdded", "userRemoved", "roomAdded"])
        #expect(seen[0].roomAdded.room.name == "Before")
        #expect(seen[1].userRemoved.userID == guestUser.id && seen[1].userRemoved.subscriber)
        #expect(seen[2].homeID == other.id.data && seen[2].roomAdded.room.name == "Elsewhere")
        let adminSaw = try await take(3, from: &adminStream)
        #expect(adminSaw.map(kindName) == ["roomAdded", "userRemoved", "roomAdded"])
        #expect(adminSaw[1].userRemoved.userID == guestUser.id && !adminSaw[1].userRemoved.subscriber)
        await guestClient.close()
        await setup.close()
    }

    /// A member sees nothing of what happened in a home before it joined: a resume point from
    /// before then gets a Resync with the home as it is, not the earlier changes.
    @Test func aResumePointFromBeforeJoiningGetsAResync() async throws {
        let setup = try await Setup()
        let guest = try await setup.owner.createAccount(named: "Gus")
        let (_, secret) = try await setup.owner.issueToken(for: guest.id.uuid)
        let guestClient = setup.server.client(token: secret)
        let before = try await setup.home.get().revision
        _ = try await setup.home.addRoom(named: "Private Study")
        try await setup.home.addUser(guest.id.uuid)
        _ = try await setup.home.addRoom(named: "Guest Room")
        var stream = guestClient.changes(ChangeOptions(homes: [setup.home.id], resumeFrom: [setup.home.id: before]))
            .makeAsyncIterator()
        let first = try await take(1, from: &stream)[0]
        #expect(kindName(first) == "resync")
        #expect(first.resync.reason == .resumePointNotRetained)
        #expect(first.resync.home.rooms.map(\.name).sorted() == ["Guest Room", "Private Study"])
        _ = try await setup.home.addRoom(named: "Later")
        #expect(try await take(1, from: &stream).map { $0.roomAdded.room.name } == ["Later"])
        await guestClient.close()
        await setup.close()
    }

    /// A removal (of the subscriber from the home, or of the home) that lands while the stream is
    /// opening, its starting state read but not yet durable, still reaches the subscriber before the
    /// stream stops. The window is about one commit long, so each round races the calls from
    /// separate connections; before the fix about a quarter of the rounds ended after the snapshot
    /// without the removal.
    @Test func aRemovalWhileTheStreamOpensIsStillDelivered() async throws {
        let setup = try await Setup()
        var raced = 0
        for round in 1...60 {
            let home = setup.owner.home(try await setup.owner.addHome(named: "Race \(round)").id.uuid)
            let member = try await home.addUser(setup.adminAccount).id.uuid
            let removesHome = round.isMultiple(of: 2)
            // The stream's opening takes two round trips (who am I, then Subscribe): the removal
            // starts at a different point of it in each round.
            let delay = Duration.microseconds(10 * (round % 40))
            let removal = Task { [home] in
                try await Task.sleep(for: delay)
                if removesHome { _ = try await home.remove() } else { try await home.removeUser(member) }
            }
            // Changes still being committed when the stream opens are what make it wait.
            let busy = Task { [home] in
                for index in 0..<8 { _ = try? await home.addRoom(named: "Busy \(index)") }
            }
            var events: [HomeEvent] = []
            do {
                var stream = setup.admin.changes(ChangeOptions(homes: [home.id], snapshot: true)).makeAsyncIterator()
                while let event = try await stream.next() { events.append(event) }
            } catch let error as HomeClientError where error.status == .notFound {
                // The removal came first: there was nothing to open.
            }
            try await removal.value
            await busy.value
            guard let first = events.first else { continue }
            raced += 1
            #expect(kindName(first) == "snapshot", "round \(round)")
            #expect(
                events.last.map(kindName) == (removesHome ? "homeRemoved" : "userRemoved"),
                "round \(round): \(events.map(kindName))"
            )
        }
        #expect(raced > 0, "no round opened its stream before the removal")
        await setup.close()
    }

    @Test func aRevokedTokenEndsItsStream() async throws {
        let setup = try await Setup()
        let (token, secret) = try await setup.owner.issueToken(for: setup.adminAccount)
        let client = setup.server.client(token: secret)
        var stream = try await opened(client, ChangeOptions(homes: [setup.home.id]))
        _ = try await setup.home.addRoom(named: "Seen")
        #expect(try await take(1, from: &stream).count == 1)
        try await setup.owner.revokeToken(token.id.uuid)
        await #expect(throws: HomeClientError.self) {
            while try await stream.next() != nil {}
        }
        await client.close()
        await setup.close()
    }
}

/// What a subscriber keeps of a home, rebuilt from a snapshot and events, compared with GetHome.
struct HomeModel: Equatable {
    var name = ""
    var rooms: [Data: String] = [:]
    var zones: [Data: String] = [:]
    var zoneRooms: [Data: Set<Data>] = [:]
    /// Each accessory's name and room.
    var accessories: [Data: AccessoryState] = [:]

    struct AccessoryState: Equatable {
        var name: String
        var room: Data
    }

    init() {}

    init(_ home: Home) {
        name = home.name
        for room in home.rooms { rooms[room.id] = room.name }
        for accessory in home.accessories { accessories[accessory.id] = AccessoryState(accessory) }
        for zone in home.zones {
            zones[zone.id] = zone.name
            zoneRooms[zone.id] = Set(zone.roomIds)
        }
    }

    mutating func apply(_ event: HomeEvent) {
        switch event.payload {
        case .snapshot(let snapshot)?: self = HomeModel(snapshot.home)
        case .resync(let resync)?: self = HomeModel(resync.home)
        case .homeNameUpdated(let renamed)?: name = renamed.name
        case .roomAdded(let added)?: rooms[added.room.id] = added.room.name
        case .roomNameUpdated(let renamed)?: rooms[renamed.roomID] = renamed.name
        case .roomRemoved(let removed)?: rooms[removed.roomID] = nil
        case .zoneAdded(let added)?:
            zones[added.zone.id] = added.zone.name
            zoneRooms[added.zone.id] = Set(added.zone.roomIds)
        case .roomAddedToZone(let change)?: zoneRooms[change.zoneID, default: []].insert(change.roomID)
        case .roomRemovedFromZone(let change)?: zoneRooms[change.zoneID]?.remove(change.roomID)
        case .accessoryAdded(let added)?:
            for accessory in [added.accessory] + (added.hasBridge ? [added.bridge] : []) {
                accessories[accessory.id] = AccessoryState(accessory)
            }
        case .accessoryNameUpdated(let renamed)?: accessories[renamed.accessoryID]?.name = renamed.name
        case .roomForAccessoryUpdated(let moved)?: accessories[moved.accessoryID]?.room = moved.roomID
        case .accessoryRemoved(let removed)?: accessories[removed.accessoryID] = nil
        default: break
        }
    }
}

extension HomeModel.AccessoryState {
    init(_ accessory: Accessory) {
        self.init(name: accessory.name, room: accessory.roomID)
    }
}
