import Foundation
import HomeAPI
import HomeClient
import HomeProto
import SwiftProtobuf
import Testing
import Wire

/// Every HomeKit code docs/API.md lists for a method, produced through the SDK against a real
/// `homed`: one case per (method, code), each in a fresh home. A case sets up what its code needs,
/// then makes the one call that must fail; the test checks the status (from the document's status
/// table), the code and its name, and that the refused call changed nothing; at the end every home
/// must come back the same from a restart. The table must match the document both ways: a
/// documented pair without a case fails, and so does a case for a pair the document does not list.
@Suite(.serialized) struct HomeKitCodeTests {
    typealias Fixture = PermissionMatrixTests.Fixture

    /// What one case works with: the shared server with its accounts, a fresh home with one of
    /// everything, and a server with every object limit set low.
    struct Scene: Sendable {
        let f: Fixture
        let o: PermissionMatrixTests.Objects
        let limited: LimitedServer
        /// A home of the owner's that `settle()` renames.
        let barrier: UUID
        var home: HomeHandle { f.owner.home(o.home.uuid) }
        var lampOn: UUID { o.on.uuid }
        var brightness: UUID { o.brightness.uuid }
        var porchOn: UUID { o.porch.characteristic(Advertised.on).id.uuid }
        var roomForEntireHome: UUID { get async throws { try await home.get().roomForEntireHome.id.uuid } }

        /// Another home of the owner, with an accessory (for the objects of another home: 11).
        func otherHome() async throws -> (home: HomeHandle, lamp: Accessory) {
            let other = f.owner.home(try await f.owner.addHome(named: "Other of \(o.homeName)").id.uuid)
            let (_, added) = try await f.pair(Advertised.bulb("Other Lamp"), into: other)
            return (other, added[0])
        }

        /// The lamp's simulator stops: it is unreachable (4).
        func lampGone() async throws {
            await o.lampSimulator.stop()
            try await eventually { try await !accessory(o.lamp.id).reachable }
        }

        /// The bridge's simulator stops: the porch behind it is unreachable (88).
        func bridgeGone() async throws {
            await o.bridgeSimulator.stop()
            try await eventually { try await !accessory(o.porch.id).reachable }
        }

        /// The bridge comes back serving nothing behind it: it is blocked, and so the porch (61).
        func porchBlocked() async throws {
            let credential = await o.bridgeSimulator.paired()
            var description = await o.bridgeSimulator.description
            await o.bridgeSimulator.stop()
            description.bridgedAccessories = []
            let back = SimulatedAccessory(
                description,
                setupCode: Simulators.setupCode,
                credential: credential,
                link: f.simulators.link
            )
            f.cellSimulators.append(back)
            try await back.start()
            try await eventually { try await accessory(o.bridge.id).blocked }
        }

        /// A "Blind" paired into the home: a window covering with Hold Position (write-only, no
        /// events), a custom "Label" (text of 4 to 8 bytes) and a custom "Setpoint" (0 to 10 by 0.5).
        func blind() async throws -> (holdPosition: UUID, label: UUID, setpoint: UUID) {
            let (_, added) = try await f.pair(Advertised.blind("Blind"), into: home)
            let blind = added[0]
            return (
                blind.characteristic(Advertised.holdPosition).id.uuid,
                blind.characteristic(Advertised.label).id.uuid,
                blind.characteristic(Advertised.setpoint).id.uuid
            )
        }

        private func accessory(_ id: Data) async throws -> Accessory {
            try await home.get().accessories.first { $0.id == id }!
        }

        /// Waits until what the setup changed on its own (an accessory's reachability) is committed:
        /// a home's revision counts committed changes, and a mutation is answered only once it and
        /// everything before it are durable.
        func settle() async throws {
            _ = try await f.owner.home(barrier).rename(to: "Barrier \(UUID().uuidString.prefix(8))")
        }

        /// The state a refused call must leave as it was.
        func state() async throws -> (Home, [Account], [TokenInfo]) {
            (try await home.get(), try await f.owner.listAccounts(), try await f.owner.listTokens())
        }
    }

    /// A server whose object limits are one (four action sets: the built-in ones), for 49.
    final class LimitedServer: Sendable {
        let server: HomedProcess
        let owner: HomeClient
        let simulators: Simulators

        init() async throws {
            server = try await HomedProcess.launch(arguments: [
                "--max-homes-per-account", "1", "--max-tokens-per-account", "1", "--max-users-per-home", "2",
                "--max-rooms-per-home", "1", "--max-zones-per-home", "1", "--max-accessories-per-home", "1",
                "--max-service-groups-per-home", "1", "--max-action-sets-per-home", "4",
                "--max-actions-per-action-set", "1", "--max-triggers-per-home", "1",
            ])
            owner = server.client()
            simulators = try await Simulators(server)
        }

        /// A new account (with the one token it may hold) and the one home it may have.
        func newcomer() async throws -> (account: UUID, client: HomeClient, home: HomeHandle) {
            let account = try await owner.createAccount(named: Self.uniqueName("Newcomer")).id.uuid
            let client = server.client(token: try await owner.issueToken(for: account).secret)
            return (account, client, client.home(try await client.addHome(named: "Small").id.uuid))
        }

        /// Account names must differ.
        static func uniqueName(_ base: String) -> String {
            "\(base) \(UUID().uuidString.prefix(8))"
        }
    }

    typealias Call = @Sendable () async throws -> Void

    struct Case: Sendable {
        let method: String
        let code: Int32
        let what: String
        /// Whether the failing call may change the home (an action set whose writes partly succeed).
        let changes: Bool
        /// Prepares the scene and returns the call that must fail.
        let setup: @Sendable (Scene) async throws -> Call

        init(
            _ method: String,
            _ code: Int32,
            _ what: String,
            changes: Bool = false,
            _ setup: @escaping @Sendable (Scene) async throws -> Call
        ) {
            self.method = method
            self.code = code
            self.what = what
            self.changes = changes
            self.setup = setup
        }
    }

    @Test func everyDocumentedCodeOfEveryMethod() async throws {
        let document = try APIDocument.load()
        let documented = document.methodCodes
        let cases =
            Self.nameCases + Self.homeCases + Self.roomCases + Self.accessoryCases
            + Self.characteristicCases + Self.groupCases + Self.actionSetCases + Self.triggerCases
            + Self.userCases + Self.accountCases
        let tested = Set(cases.map { "\($0.method) \($0.code)" })
        let missing = documented.subtracting(tested)
        #expect(missing.isEmpty, "documented but not tested: \(missing.sorted())")
        let undocumented = tested.subtracting(documented)
        #expect(undocumented.isEmpty, "tested but not in docs/API.md: \(undocumented.sorted())")

        let fixture = try await Fixture(arguments: ["--accessory-timeout", "2000"])
        let limited = try await LimitedServer()
        let barrier = try await fixture.owner.addHome(named: "Barrier").id.uuid
        for test in cases {
            let scene = Scene(f: fixture, o: try await fixture.home(), limited: limited, barrier: barrier)
            let label = "\(test.method) \(test.code) (\(test.what))"
            do {
                let call = try await test.setup(scene)
                try await scene.settle()
                let before = try await scene.state()
                await expectFailure(document.status(of: test.code), test.code, label) {
                    do {
                        try await call()
                    } catch let error as HomeClientError {
                        #expect(error.homeKitName?.isEmpty == false, "\(label): no code name in \(error)")
                        throw error
                    }
                }
                if !test.changes {
                    let after = try await scene.state()
                    #expect(after.0 == before.0, "\(label): the refused call changed the home")
                    #expect(after.1 == before.1 && after.2 == before.2, "\(label): the refused call changed accounts")
                }
            } catch {
                Issue.record("\(label): setup failed: \(error)")
            }
            await fixture.endCell()
        }
        // Nothing of that stopped the server, and what it acknowledged is durable while nothing it
        // refused appears: every home comes back from a restart as the cases left it (their
        // accessories are unreachable already: each case's simulators stopped with it).
        await fixture.simulators.close()
        _ = try await fixture.owner.home(barrier).rename(to: "Barrier Settled")
        var left: [Home] = []
        for home in try await fixture.owner.listHomes() {
            left.append(try await fixture.owner.home(home.id.uuid).get())
        }
        #expect(left.count > cases.count)
        try await fixture.server.restart()
        for home in left {
            #expect(try await fixture.owner.home(home.id.uuid).get() == home, "\(home.name) differs after a restart")
        }
        for client in fixture.clients.values { await client.close() }
        await limited.owner.close()
        await limited.simulators.close()
    }

    /// Every method in a home answers a malformed home id (3 bytes, not 16) with INVALID_ARGUMENT
    /// and 3, naming the field, and changes nothing.
    @Test func aMalformedHomeIDIsRefusedByEveryHomeMethod() async throws {
        let fixture = try await Fixture()
        var checked = 0
        for method in HomeAPI.methods where !method.isStreaming {
            let short = String(method.name.split(separator: "/").last!)
            let objects = try await fixture.home()
            let valid = try await PermissionMatrixTests.request(for: short, objects, caller: .owner, fixture)
            guard try valid.jsonString().contains("\"homeId\"") else { continue }
            let before = try await fixture.owner.home(objects.home.uuid).get()
            await expectFailure(.invalidArgument, 3, short) {
                do {
                    _ = try await fixture.owner.call(
                        method.name,
                        try Self.withMalformedHomeID(valid),
                        returning: Google_Protobuf_Empty.self
                    )
                } catch let error as HomeClientError {
                    #expect(error.field == "home_id", "\(short): \(error)")
                    throw error
                }
            }
            #expect(try await fixture.owner.home(objects.home.uuid).get() == before, "\(short) changed the home")
            await fixture.endCell()
            checked += 1
        }
        #expect(checked >= 50)
        for client in fixture.clients.values { await client.close() }
        await fixture.simulators.close()
    }

    /// `request` with a 3-byte `home_id` (field 1 of every request in a home; the last value wins).
    static func withMalformedHomeID<Request: SwiftProtobuf.Message>(_ request: Request) throws -> Request {
        try Request(serializedBytes: try request.serializedBytes() + [0x0A, 3, 1, 2, 3] as [UInt8])
    }

    // MARK: The cases

    /// The name codes (3, 46, 36, 35, 60), for every method that takes a name.
    static let nameCases: [Case] = {
        let namers: [(String, @Sendable (Scene, String) async throws -> Void)] = [
            ("AddHome", { s, name in _ = try await s.f.owner.addHome(named: name) }),
            ("RenameHome", { s, name in _ = try await s.home.rename(to: name) }),
            ("AddRoom", { s, name in _ = try await s.home.addRoom(named: name) }),
            ("RenameRoom", { s, name in _ = try await s.home.renameRoom(s.o.room.uuid, to: name) }),
            ("AddZone", { s, name in _ = try await s.home.addZone(named: name) }),
            ("RenameZone", { s, name in _ = try await s.home.renameZone(s.o.zone.uuid, to: name) }),
            ("RenameAccessory", { s, name in _ = try await s.home.renameAccessory(s.o.lamp.id.uuid, to: name) }),
            (
                "RenameService",
                { s, name in _ = try await s.home.renameService(s.o.lamp.services[0].id.uuid, to: name) }
            ),
            ("AddServiceGroup", { s, name in _ = try await s.home.addServiceGroup(named: name) }),
            ("RenameServiceGroup", { s, name in _ = try await s.home.renameServiceGroup(s.o.group.uuid, to: name) }),
            ("AddActionSet", { s, name in _ = try await s.home.addActionSet(named: name) }),
            ("RenameActionSet", { s, name in _ = try await s.home.renameActionSet(s.o.actionSet.uuid, to: name) }),
            (
                "AddTrigger",
                { s, name in
                    _ = try await s.home.addTrigger(named: name, fireDate: Date(milliseconds: s.o.fireDate))
                }
            ),
            ("RenameTrigger", { s, name in _ = try await s.home.renameTrigger(s.o.trigger.uuid, to: name) }),
            ("CreateAccount", { s, name in _ = try await s.f.owner.createAccount(named: name) }),
        ]
        let badNames: [(Int32, String, String)] = [
            (3, "", "empty"),
            (46, String(repeating: "a", count: 65), "65 characters"),
            (36, " Den", "starts with a space"),
            (35, "Den!x", "a prohibited character"),
            (60, "Den '", "ends with an apostrophe"),
        ]
        return namers.flatMap { method, name in
            badNames.map { code, bad, what in Case(method, code, what) { s in { try await name(s, bad) } } }
        }
    }()

    static let homeCases: [Case] = [
        Case("GetHome", 2, "no such home") { s in { _ = try await s.f.owner.home(UUID()).get() } },
        Case("AddHome", 32, "the caller has a home of a similar name") { s in
            { _ = try await s.f.owner.addHome(named: s.o.homeName.uppercased()) }
        },
        Case("AddHome", 49, "past the homes per account") { s in
            let newcomer = try await s.limited.newcomer()
            return { _ = try await newcomer.client.addHome(named: "Second") }
        },
        Case("RemoveHome", 2, "no such home") { s in { _ = try await s.f.owner.home(UUID()).remove() } },
        Case("RenameHome", 33, "its own name, differently cased") { s in
            { _ = try await s.home.rename(to: s.o.homeName.lowercased()) }
        },
        Case("RenameHome", 32, "a member's other home has it") { s in
            let other = try await s.f.owner.addHome(named: "Summer House \(s.o.homeName)")
            return { _ = try await s.home.rename(to: other.name) }
        },
        Case("RenameHome", 31, "a room of the home has it") { s in { _ = try await s.home.rename(to: "den") } },
        Case("SetPrimaryHome", 2, "no such home") { s in { try await s.f.owner.home(UUID()).makePrimary() } },
        Case("SetHomeTimeZone", 3, "not an IANA zone") { s in { try await s.home.setTimeZone("Mars/Olympus") } },
        Case("SetHomeTimeZone", 46, "too long") { s in
            { try await s.home.setTimeZone(String(repeating: "Europe/", count: 200)) }
        },
        Case("Subscribe", 2, "no such home") { s in
            {
                var events = s.f.owner.changes(ChangeOptions(homes: [UUID()])).makeAsyncIterator()
                _ = try await events.next()
            }
        },
        Case("Subscribe", 3, "a home named twice") { s in
            {
                var events = s.f.owner.changes(ChangeOptions(homes: [s.o.home.uuid, s.o.home.uuid]))
                    .makeAsyncIterator()
                _ = try await events.next()
            }
        },
    ]

    static let roomCases: [Case] = [
        Case("AddRoom", 31, "a room of a similar name") { s in { _ = try await s.home.addRoom(named: "DEN") } },
        Case("AddRoom", 49, "past the rooms per home") { s in
            let newcomer = try await s.limited.newcomer()
            _ = try await newcomer.home.addRoom(named: "First")
            return { _ = try await newcomer.home.addRoom(named: "Second") }
        },
        Case("RemoveRoom", 29, "the room for the entire home") { s in
            let room = try await s.roomForEntireHome
            return { try await s.home.removeRoom(room) }
        },
        Case("RenameRoom", 33, "its own name") { s in { _ = try await s.home.renameRoom(s.o.room.uuid, to: "DEN") } },
        Case("RenameRoom", 31, "another room's name") { s in
            _ = try await s.home.addRoom(named: "Hall")
            return { _ = try await s.home.renameRoom(s.o.room.uuid, to: "hall") }
        },
        Case("RenameRoom", 29, "the room for the entire home") { s in
            let room = try await s.roomForEntireHome
            return { _ = try await s.home.renameRoom(room, to: "Everywhere") }
        },
        Case("AddZone", 31, "a zone of a similar name") { s in { _ = try await s.home.addZone(named: "up stairs") } },
        Case("AddZone", 49, "past the zones per home") { s in
            let newcomer = try await s.limited.newcomer()
            _ = try await newcomer.home.addZone(named: "First")
            return { _ = try await newcomer.home.addZone(named: "Second") }
        },
        Case("RemoveZone", 2, "no such zone") { s in { try await s.home.removeZone(UUID()) } },
        Case("RenameZone", 33, "its own name") { s in
            { _ = try await s.home.renameZone(s.o.zone.uuid, to: "UPSTAIRS") }
        },
        Case("RenameZone", 31, "a room's name") { s in { _ = try await s.home.renameZone(s.o.zone.uuid, to: "den") } },
        Case("AddRoomToZone", 24, "the room for the entire home") { s in
            let room = try await s.roomForEntireHome
            return { _ = try await s.home.addRoom(room, toZone: s.o.zone.uuid) }
        },
        Case("AddRoomToZone", 1, "already in the zone") { s in
            { _ = try await s.home.addRoom(s.o.room.uuid, toZone: s.o.zone.uuid) }
        },
        Case("AddRoomToZone", 11, "a room of another home") { s in
            let other = try await s.otherHome()
            let room = try await other.home.addRoom(named: "Shed")
            return { _ = try await s.home.addRoom(room.id.uuid, toZone: s.o.zone.uuid) }
        },
        Case("RemoveRoomFromZone", 2, "not in the zone") { s in
            let room = try await s.home.addRoom(named: "Cellar")
            return { _ = try await s.home.removeRoom(room.id.uuid, fromZone: s.o.zone.uuid) }
        },
    ]

    static let accessoryCases: [Case] = [
        Case("AddAccessory", 2, "not advertised") { s in
            { _ = try await s.home.addAccessory(UUID(), setupCode: Simulators.setupCode) }
        },
        Case("AddAccessory", 13, "already in a home") { s in
            { _ = try await s.home.addAccessory(s.o.lamp.id.uuid, setupCode: Simulators.setupCode) }
        },
        Case("AddAccessory", 18, "a wrong setup code") { s in
            let advertised = try await s.f.advertise(Advertised.bulb("Desk"))
            return { _ = try await s.home.addAccessory(advertised.uuid, setupCode: "111-22-333") }
        },
        Case("AddAccessory", 49, "past the accessories per home") { s in
            let newcomer = try await s.limited.newcomer()
            _ = try await s.limited.simulators.pair(Advertised.bulb("First"), into: newcomer.home)
            let second = SimulatedAccessory(
                Advertised.bulb("Second"),
                setupCode: Simulators.setupCode,
                link: s.limited.simulators.link
            )
            try await second.start()
            let id = await second.id
            return { _ = try await newcomer.home.addAccessory(id, setupCode: Simulators.setupCode) }
        },
        Case("RemoveAccessory", 34, "a bridged accessory") { s in
            { try await s.home.removeAccessory(s.o.porch.id.uuid) }
        },
        Case("RenameAccessory", 33, "its own name") { s in
            { _ = try await s.home.renameAccessory(s.o.lamp.id.uuid, to: "LAMP") }
        },
        Case("RenameAccessory", 31, "a room's name") { s in
            { _ = try await s.home.renameAccessory(s.o.lamp.id.uuid, to: "Den") }
        },
        Case("AssignAccessoryToRoom", 11, "a room of another home") { s in
            let other = try await s.otherHome()
            let room = try await other.home.addRoom(named: "Shed")
            return { _ = try await s.home.assignAccessory(s.o.lamp.id.uuid, toRoom: room.id.uuid) }
        },
        Case("IdentifyAccessory", 61, "blocked") { s in
            try await s.porchBlocked()
            return { try await s.home.identifyAccessory(s.o.porch.id.uuid) }
        },
        Case("IdentifyAccessory", 48, "it cannot identify itself") { s in
            var mute = Advertised.bulb("Mute")
            mute.supportsIdentify = false
            let (_, added) = try await s.f.pair(mute, into: s.home)
            return { try await s.home.identifyAccessory(added[0].id.uuid) }
        },
        Case("IdentifyAccessory", 4, "unreachable") { s in
            try await s.lampGone()
            return { try await s.home.identifyAccessory(s.o.lamp.id.uuid) }
        },
        Case("IdentifyAccessory", 88, "its bridge is unreachable") { s in
            try await s.bridgeGone()
            return { try await s.home.identifyAccessory(s.o.porch.id.uuid) }
        },
        Case("IdentifyAccessory", 8, "the accessory does not answer") { s in
            await s.o.lampSimulator.setResponsive(false)
            return { try await s.home.identifyAccessory(s.o.lamp.id.uuid) }
        },
        Case("UnblockAccessory", 81, "not a bridge") { s in
            { _ = try await s.home.unblockAccessory(s.o.lamp.id.uuid) }
        },
        Case("RenameService", 33, "its own name") { s in
            let service = s.o.lamp.services[0].id.uuid
            _ = try await s.home.renameService(service, to: "Glow")
            return { _ = try await s.home.renameService(service, to: "glow") }
        },
        Case("RenameService", 31, "a room's name") { s in
            { _ = try await s.home.renameService(s.o.lamp.services[0].id.uuid, to: "Den") }
        },
        Case("UpdateAssociatedServiceType", 62, "a lightbulb is not an outlet or switch") { s in
            { _ = try await s.home.updateAssociatedServiceType(s.o.lamp.services[0].id.uuid, to: Advertised.outlet) }
        },
    ]

    static let characteristicCases: [Case] =
        [
            Case("ReadCharacteristic", 6, "write-only") { s in
                let blind = try await s.blind()
                return { _ = try await s.home.readCharacteristic(blind.holdPosition) }
            },
            Case("ReadCharacteristic", 61, "blocked") { s in
                try await s.porchBlocked()
                return { _ = try await s.home.readCharacteristic(s.porchOn) }
            },
            Case("ReadCharacteristic", 4, "fresh, unreachable") { s in
                try await s.lampGone()
                return { _ = try await s.home.readCharacteristic(s.brightness, fresh: true) }
            },
            Case("ReadCharacteristic", 88, "fresh, the bridge unreachable") { s in
                try await s.bridgeGone()
                return { _ = try await s.home.readCharacteristic(s.porchOn, fresh: true) }
            },
            Case("ReadCharacteristic", 8, "fresh, the accessory does not answer") { s in
                await s.o.lampSimulator.setResponsive(false)
                return { _ = try await s.home.readCharacteristic(s.brightness, fresh: true) }
            },
            Case("ReadCharacteristic", 50, "fresh, the accessory answers text for a number") { s in
                try await s.o.lampSimulator.change(s.brightness, to: .string("bright"), report: false)
                return { _ = try await s.home.readCharacteristic(s.brightness, fresh: true) }
            },
            Case("WriteCharacteristic", 5, "read-only") { s in
                let temperature = s.o.plug.characteristic(Advertised.currentTemperature).id.uuid
                return { try await s.home.writeCharacteristic(temperature, .float(21)) }
            },
            Case("WriteCharacteristic", 61, "blocked") { s in
                try await s.porchBlocked()
                return { try await s.home.writeCharacteristic(s.porchOn, .bool(true)) }
            },
            Case("WriteCharacteristic", 4, "unreachable") { s in
                try await s.lampGone()
                return { try await s.home.writeCharacteristic(s.lampOn, .bool(true)) }
            },
            Case("WriteCharacteristic", 88, "the bridge unreachable") { s in
                try await s.bridgeGone()
                return { try await s.home.writeCharacteristic(s.porchOn, .bool(true)) }
            },
            Case("WriteCharacteristic", 8, "the accessory does not answer") { s in
                await s.o.lampSimulator.setResponsive(false)
                return { try await s.home.writeCharacteristic(s.lampOn, .bool(true)) }
            },
            Case("EnableNotification", 7, "no event support") { s in
                let blind = try await s.blind()
                return { try await s.home.enableNotification(blind.holdPosition) }
            },
            Case("EnableNotification", 61, "blocked") { s in
                try await s.porchBlocked()
                return { try await s.home.enableNotification(s.porchOn) }
            },
            Case("EnableNotification", 4, "unreachable") { s in
                try await s.lampGone()
                return { try await s.home.enableNotification(s.lampOn) }
            },
            Case("EnableNotification", 88, "the bridge unreachable") { s in
                try await s.bridgeGone()
                return { try await s.home.enableNotification(s.porchOn) }
            },
        ]
        + valueCases("WriteCharacteristic") { s, characteristic, _, bad in
            { try await s.home.writeCharacteristic(characteristic, bad) }
        }
        + valueCases("AddAction") { s, characteristic, _, bad in
            { try await s.home.addAction(writing: bad, to: characteristic, in: s.o.actionSet.uuid) }
        }
        + valueCases("UpdateActionTargetValue") { s, characteristic, valid, bad in
            let action = UUID()
            try await s.home.addAction(writing: valid, to: characteristic, in: s.o.actionSet.uuid, actionID: action)
            return { try await s.home.updateTargetValue(of: action, in: s.o.actionSet.uuid, to: bad) }
        }

    /// The value codes (43, 44, 45, 46, 51, 3) of a method that takes a characteristic's value.
    /// - Parameter call: given the characteristic, a value it takes and the bad value.
    static func valueCases(
        _ method: String,
        _ call: @escaping @Sendable (Scene, UUID, CharacteristicValue, CharacteristicValue) async throws -> Call
    ) -> [Case] {
        typealias Pick = @Sendable (Scene) async throws -> UUID
        let brightness: Pick = { s in s.brightness }
        let label: Pick = { s in try await s.blind().label }
        let setpoint: Pick = { s in try await s.blind().setpoint }
        let values: [(Int32, String, Pick, CharacteristicValue, CharacteristicValue)] = [
            (43, "a bool for a number", brightness, .int(10), .bool(true)),
            (44, "below the minimum", brightness, .int(10), .int(-1)),
            (45, "above the maximum", brightness, .int(10), .int(101)),
            (46, "text over its maximum length", label, .string("Door"), .string("Front Door")),
            (51, "text under its minimum length", label, .string("Door"), .string("Up")),
            (3, "off the step grid", setpoint, .float(1), .float(2.25)),
        ]
        return values.map { code, what, pick, valid, bad in
            Case(method, code, what) { s in try await call(s, try await pick(s), valid, bad) }
        }
    }

    static let groupCases: [Case] = [
        Case("AddServiceGroup", 31, "a group of a similar name") { s in
            { _ = try await s.home.addServiceGroup(named: "lights") }
        },
        Case("AddServiceGroup", 49, "past the groups per home") { s in
            let newcomer = try await s.limited.newcomer()
            _ = try await newcomer.home.addServiceGroup(named: "First")
            return { _ = try await newcomer.home.addServiceGroup(named: "Second") }
        },
        Case("RenameServiceGroup", 33, "its own name") { s in
            { _ = try await s.home.renameServiceGroup(s.o.group.uuid, to: "LIGHTS") }
        },
        Case("RenameServiceGroup", 31, "a room's name") { s in
            { _ = try await s.home.renameServiceGroup(s.o.group.uuid, to: "Den") }
        },
        Case("AddServiceToGroup", 1, "already in the group") { s in
            { _ = try await s.home.addService(s.o.lamp.services[0].id.uuid, toGroup: s.o.group.uuid) }
        },
        Case("AddServiceToGroup", 11, "a service of another home") { s in
            let other = try await s.otherHome()
            return { _ = try await s.home.addService(other.lamp.services[0].id.uuid, toGroup: s.o.group.uuid) }
        },
        Case("RemoveServiceFromGroup", 2, "not in the group") { s in
            { _ = try await s.home.removeService(s.o.plug.services[0].id.uuid, fromGroup: s.o.group.uuid) }
        },
    ]

    static let actionSetCases: [Case] = [
        Case("AddActionSet", 31, "a set of a similar name") { s in
            { _ = try await s.home.addActionSet(named: "EVENING") }
        },
        Case("AddActionSet", 49, "past the action sets per home") { s in
            let newcomer = try await s.limited.newcomer()
            return { _ = try await newcomer.home.addActionSet(named: "Fifth") }
        },
        Case("RemoveActionSet", 83, "a built-in set") { s in
            let builtIn = try await s.home.get().actionSets.first { $0.id != s.o.actionSet }!
            return { try await s.home.removeActionSet(builtIn.id.uuid) }
        },
        Case("RenameActionSet", 33, "its own name") { s in
            { _ = try await s.home.renameActionSet(s.o.actionSet.uuid, to: "evening") }
        },
        Case("RenameActionSet", 31, "a room's name") { s in
            { _ = try await s.home.renameActionSet(s.o.actionSet.uuid, to: "Den") }
        },
        Case("AddAction", 30, "the action is in another set") { s in
            let spare = try await s.home.addActionSet(named: "Spare")
            return {
                try await s.home.addAction(
                    writing: .bool(false),
                    to: s.lampOn,
                    in: spare.id.uuid,
                    actionID: s.o.action.uuid
                )
            }
        },
        Case("AddAction", 1, "the set already writes that characteristic") { s in
            { try await s.home.addAction(writing: .bool(false), to: s.lampOn, in: s.o.actionSet.uuid) }
        },
        Case("AddAction", 5, "a read-only characteristic") { s in
            let temperature = s.o.plug.characteristic(Advertised.currentTemperature).id.uuid
            return { try await s.home.addAction(writing: .float(20), to: temperature, in: s.o.actionSet.uuid) }
        },
        Case("AddAction", 11, "a characteristic of another home") { s in
            let other = try await s.otherHome()
            let on = other.lamp.characteristic(Advertised.on).id.uuid
            return { try await s.home.addAction(writing: .bool(true), to: on, in: s.o.actionSet.uuid) }
        },
        Case("AddAction", 49, "past the actions per set") { s in
            let newcomer = try await s.limited.newcomer()
            let lamp = try await s.limited.simulators.pair(Advertised.bulb("Lamp"), into: newcomer.home).accessories[0]
            let builtIn = try await newcomer.home.get().actionSets[0].id.uuid
            try await newcomer.home.addAction(
                writing: .bool(true),
                to: lamp.characteristic(Advertised.on).id.uuid,
                in: builtIn
            )
            let brightness = lamp.characteristic(Advertised.brightness).id.uuid
            return { try await newcomer.home.addAction(writing: .int(5), to: brightness, in: builtIn) }
        },
        Case("RemoveAction", 2, "not in the set") { s in
            { try await s.home.removeAction(UUID(), from: s.o.actionSet.uuid) }
        },
        Case("UpdateActionTargetValue", 2, "not in the set") { s in
            { try await s.home.updateTargetValue(of: UUID(), in: s.o.actionSet.uuid, to: .bool(false)) }
        },
        Case("ExecuteActionSet", 25, "no actions") { s in
            let empty = try await s.home.addActionSet(named: "Empty")
            return { try await s.home.executeActionSet(empty.id.uuid) }
        },
        Case("ExecuteActionSet", 65, "executing now") { s in
            await s.o.lampSimulator.setWriteBehaviour(.ignore)
            let first = Task { try await s.home.executeActionSet(s.o.actionSet.uuid) }
            try await eventually { try await s.home.get().actionSets.first { $0.id == s.o.actionSet }!.executing }
            return {
                defer { first.cancel() }
                try await s.home.executeActionSet(s.o.actionSet.uuid)
            }
        },
        // The set's last execution time changes, as in HomeKit, whatever the writes' outcome.
        Case("ExecuteActionSet", 63, "every write refused", changes: true) { s in
            await s.o.lampSimulator.setWriteBehaviour(.refuse(hapStatus: -70402))
            return { try await s.home.executeActionSet(s.o.actionSet.uuid) }
        },
        Case("ExecuteActionSet", 64, "one write of two refused", changes: true) { s in
            let plugOn = s.o.plug.characteristic(Advertised.on).id.uuid
            try await s.home.addAction(writing: .bool(true), to: plugOn, in: s.o.actionSet.uuid)
            await s.o.plugSimulator.setWriteBehaviour(.refuse(hapStatus: -70402))
            return { try await s.home.executeActionSet(s.o.actionSet.uuid) }
        },
    ]

    static let triggerCases: [Case] = [
        Case("AddTrigger", 31, "a room's name") { s in
            { _ = try await s.home.addTrigger(named: "Den", fireDate: Date(milliseconds: s.o.fireDate)) }
        },
        Case("AddTrigger", 3, "a date after 9999") { s in
            { _ = try await s.home.addTrigger(named: "Late", fireDate: Date(milliseconds: 400_000_000_000_000)) }
        },
        Case("AddTrigger", 70, "not on a whole minute") { s in
            { _ = try await s.home.addTrigger(named: "Odd", fireDate: Date(milliseconds: s.o.fireDate + 1_000)) }
        },
        Case("AddTrigger", 28, "a one-shot date in the past") { s in
            { _ = try await s.home.addTrigger(named: "Past", fireDate: Date(milliseconds: s.o.fireDate - 7_200_000)) }
        },
        Case("AddTrigger", 69, "90 seconds") { s in
            {
                _ = try await s.home.addTrigger(
                    named: "Often",
                    fireDate: Date(milliseconds: s.o.fireDate),
                    recurrence: Recurrence(90, .second)
                )
            }
        },
        Case("AddTrigger", 42, "every minute") { s in
            {
                _ = try await s.home.addTrigger(
                    named: "Often",
                    fireDate: Date(milliseconds: s.o.fireDate),
                    recurrence: Recurrence(1, .minute)
                )
            }
        },
        Case("AddTrigger", 72, "every 6 weeks") { s in
            {
                _ = try await s.home.addTrigger(
                    named: "Rarely",
                    fireDate: Date(milliseconds: s.o.fireDate),
                    recurrence: Recurrence(6, .week)
                )
            }
        },
        Case("AddTrigger", 49, "past the triggers per home") { s in
            let newcomer = try await s.limited.newcomer()
            let date = Date(milliseconds: s.o.fireDate)
            _ = try await newcomer.home.addTrigger(named: "First", fireDate: date)
            return { _ = try await newcomer.home.addTrigger(named: "Second", fireDate: date) }
        },
        Case("RenameTrigger", 33, "its own name") { s in
            { _ = try await s.home.renameTrigger(s.o.trigger.uuid, to: "DUSK") }
        },
        Case("RenameTrigger", 31, "a room's name") { s in
            { _ = try await s.home.renameTrigger(s.o.trigger.uuid, to: "Den") }
        },
        Case("EnableTrigger", 26, "no action sets") { s in
            let bare = try await s.home.addTrigger(named: "Bare", fireDate: Date(milliseconds: s.o.fireDate))
            return { _ = try await s.home.enableTrigger(bare.id.uuid) }
        },
        Case("EnableTrigger", 25, "an action set without actions") { s in
            let empty = try await s.home.addActionSet(named: "Empty")
            try await s.home.addActionSet(empty.id.uuid, toTrigger: s.o.trigger.uuid)
            return { _ = try await s.home.enableTrigger(s.o.trigger.uuid) }
        },
        Case("EnableTrigger", 28, "a one-shot whose date passed") { _ in
            // The server's clock a second before a whole minute: the trigger's date passes at once.
            let now = (Int64(Date().timeIntervalSince1970 * 1000) / 60_000 + 1) * 60_000 - 1_000
            let clocked = try await ClockedServer(at: now, in: "UTC")
            let trigger = try await clocked.triggerRunningTheAction(from: now + 1_000, every: nil)
            try await Task.sleep(for: .seconds(1.5))
            return { try await clocked.finally { _ = try await clocked.home.enableTrigger(trigger) } }
        },
        Case("EnableTrigger", 71, "first fire 6 weeks ahead") { s in
            let far = Date(milliseconds: s.o.fireDate + 6 * 7 * 86_400_000)
            let trigger = try await s.home.addTrigger(named: "Far", fireDate: far)
            try await s.home.addActionSet(s.o.actionSet.uuid, toTrigger: trigger.id.uuid)
            return { _ = try await s.home.enableTrigger(trigger.id.uuid) }
        },
        Case("UpdateTriggerFireDate", 3, "a date before 1970") { s in
            { _ = try await s.home.updateFireDate(of: s.o.trigger.uuid, to: Date(milliseconds: -60_000)) }
        },
        Case("UpdateTriggerFireDate", 70, "not on a whole minute") { s in
            { _ = try await s.home.updateFireDate(of: s.o.trigger.uuid, to: Date(milliseconds: s.o.fireDate + 30_000)) }
        },
        Case("UpdateTriggerFireDate", 28, "a one-shot date in the past") { s in
            let once = try await s.home.addTrigger(named: "Once", fireDate: Date(milliseconds: s.o.fireDate))
            return {
                _ = try await s.home.updateFireDate(of: once.id.uuid, to: Date(milliseconds: s.o.fireDate - 7_200_000))
            }
        },
        Case("UpdateTriggerFireDate", 71, "an enabled trigger moved 6 weeks ahead") { s in
            _ = try await s.home.enableTrigger(s.o.trigger.uuid)
            let far = Date(milliseconds: s.o.fireDate + 6 * 7 * 86_400_000)
            return { _ = try await s.home.updateFireDate(of: s.o.trigger.uuid, to: far) }
        },
        Case("UpdateTriggerRecurrence", 69, "90 seconds") { s in
            { _ = try await s.home.updateRecurrence(of: s.o.trigger.uuid, to: Recurrence(90, .second)) }
        },
        Case("UpdateTriggerRecurrence", 42, "every minute") { s in
            { _ = try await s.home.updateRecurrence(of: s.o.trigger.uuid, to: Recurrence(1, .minute)) }
        },
        Case("UpdateTriggerRecurrence", 72, "every 6 weeks") { s in
            { _ = try await s.home.updateRecurrence(of: s.o.trigger.uuid, to: Recurrence(6, .week)) }
        },
        Case("UpdateTriggerRecurrence", 71, "5 weeks over a daylight-saving change make more than 5") { s in
            try await daylightSavingTrigger()
        },
        Case("UpdateTriggerRecurrence", 28, "one-shot with a date in the past") { s in
            let daily = try await s.home.addTrigger(
                named: "Daily",
                fireDate: Date(milliseconds: s.o.fireDate - 7_200_000),
                recurrence: Recurrence(1, .day)
            )
            return { _ = try await s.home.updateRecurrence(of: daily.id.uuid, to: nil) }
        },
        Case("AddActionSetToTrigger", 1, "already attached") { s in
            { _ = try await s.home.addActionSet(s.o.actionSet.uuid, toTrigger: s.o.trigger.uuid) }
        },
        Case("AddActionSetToTrigger", 11, "an action set of another home") { s in
            let other = try await s.otherHome()
            let set = try await other.home.addActionSet(named: "Away")
            return { _ = try await s.home.addActionSet(set.id.uuid, toTrigger: s.o.trigger.uuid) }
        },
        Case("RemoveActionSetFromTrigger", 2, "not attached") { s in
            let spare = try await s.home.addActionSet(named: "Spare")
            return { _ = try await s.home.removeActionSet(spare.id.uuid, fromTrigger: s.o.trigger.uuid) }
        },
    ]

    /// An enabled daily trigger in Berlin that last fired on 2027-10-04 at midnight, on a server
    /// whose clock reads 30 s later; the call makes it recur every 5 weeks. Europe's clocks go back
    /// on 2027-10-31, so 5 calendar weeks later is 5 weeks and an hour away: too far to stay enabled.
    static func daylightSavingTrigger() async throws -> Call {
        let lastFire: Int64 = 1_822_600_800_000  // 2027-10-03T22:00:00Z, midnight in Berlin
        let clocked = try await ClockedServer(at: lastFire + 30_000, in: "Europe/Berlin")
        let trigger = try await clocked.triggerRunningTheAction(from: lastFire, every: Recurrence(1, .day))
        _ = try await clocked.home.enableTrigger(trigger)
        return {
            try await clocked.finally {
                _ = try await clocked.home.updateRecurrence(of: trigger, to: Recurrence(5, .week))
            }
        }
    }

    /// A server of its own whose clock reads a chosen time, with a home in a chosen time zone and an
    /// action set with one action (for the cases that depend on the date).
    final class ClockedServer: Sendable {
        let server: HomedProcess
        let owner: HomeClient
        let simulators: Simulators
        let home: HomeHandle
        let actionSet: UUID

        init(at now: Int64, in timeZone: String) async throws {
            let offset = now - Int64(Date().timeIntervalSince1970 * 1000)
            server = try await HomedProcess.launch(arguments: ["--clock-offset-ms", String(offset)])
            owner = server.client()
            home = owner.home(try await owner.addHome(named: "Clocked").id.uuid)
            try await home.setTimeZone(timeZone)
            simulators = try await Simulators(server)
            let lamp = try await simulators.pair(Advertised.bulb("Lamp"), into: home).accessories[0]
            actionSet = try await home.addActionSet(named: "Evening").id.uuid
            try await home.addAction(
                writing: .bool(true),
                to: lamp.characteristic(Advertised.on).id.uuid,
                in: actionSet
            )
        }

        /// A trigger (disabled) firing the action set.
        func triggerRunningTheAction(from fireDate: Int64, every recurrence: Recurrence?) async throws -> UUID {
            let trigger = try await home.addTrigger(
                named: "Timer",
                fireDate: Date(milliseconds: fireDate),
                recurrence: recurrence
            )
            try await home.addActionSet(actionSet, toTrigger: trigger.id.uuid)
            return trigger.id.uuid
        }

        /// Makes `call`, then closes the clients (the server stops with this object).
        func finally(_ call: () async throws -> Void) async throws {
            var failure: (any Error)?
            do { try await call() } catch { failure = error }
            await simulators.close()
            await owner.close()
            if let failure { throw failure }
        }
    }

    static let userCases: [Case] = [
        Case("AddUser", 2, "no such account") { s in { _ = try await s.home.addUser(UUID()) } },
        Case("AddUser", 1, "already a member") { s in
            { _ = try await s.home.addUser(s.f.accounts[.guest]!) }
        },
        Case("AddUser", 32, "the account has a home of a similar name") { s in
            let stranger = s.f.clients[.nonMember]!
            _ = try await stranger.addHome(named: s.o.homeName.lowercased())
            return { _ = try await s.home.addUser(s.f.accounts[.nonMember]!) }
        },
        Case("AddUser", 49, "past the users per home") { s in
            let newcomer = try await s.limited.newcomer()
            let second = try await s.limited.owner.createAccount(named: LimitedServer.uniqueName("Second")).id.uuid
            let third = try await s.limited.owner.createAccount(named: LimitedServer.uniqueName("Third")).id.uuid
            _ = try await newcomer.home.addUser(second)
            return { _ = try await newcomer.home.addUser(third) }
        },
        Case("RemoveUser", 2, "not a member") { s in { try await s.home.removeUser(s.o.extraAccount.uuid) } },
        Case("RemoveUser", 48, "the owner") { s in
            { try await s.home.removeUser(s.f.accounts[.owner]!) }
        },
        Case("UpdateUserAccess", 2, "not a member") { s in
            { _ = try await s.home.updateUserAccess(s.o.extraAccount.uuid, administrator: true) }
        },
        Case("UpdateUserAccess", 48, "the owner") { s in
            { _ = try await s.home.updateUserAccess(s.f.accounts[.owner]!, administrator: false) }
        },
    ]

    static let accountCases: [Case] = [
        Case("CreateAccount", 17, "an administrator") { s in
            { _ = try await s.f.clients[.administrator]!.createAccount(named: "Mallory") }
        },
        Case("ListAccounts", 17, "a guest") { s in { _ = try await s.f.clients[.guest]!.listAccounts() } },
        Case("IssueToken", 2, "no such account") { s in { _ = try await s.f.owner.issueToken(for: UUID()) } },
        Case("IssueToken", 17, "for another account") { s in
            { _ = try await s.f.clients[.administrator]!.issueToken(for: s.f.accounts[.guest]!) }
        },
        Case("IssueToken", 49, "past the tokens per account") { s in
            let newcomer = try await s.limited.newcomer()
            return { _ = try await s.limited.owner.issueToken(for: newcomer.account) }
        },
        Case("RevokeToken", 2, "no such token") { s in { try await s.f.owner.revokeToken(UUID()) } },
        Case("ListTokens", 2, "no such account") { s in { _ = try await s.f.owner.listTokens(of: UUID()) } },
        Case("ListTokens", 17, "another account's") { s in
            { _ = try await s.f.clients[.guest]!.listTokens(of: s.f.accounts[.administrator]!) }
        },
    ]
}

/// docs/API.md as a client reads it: the status each HomeKit code travels under, and the codes each
/// method's row lists.
struct APIDocument {
    let text: String

    static func load() throws -> APIDocument {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return APIDocument(text: try String(contentsOf: root.appendingPathComponent("docs/API.md"), encoding: .utf8))
    }

    /// "Method code" for every code in every method row ("name codes" and "value codes" expanded;
    /// numbers in parentheses and code spans are explanations, not codes).
    var methodCodes: Set<String> {
        var pairs: Set<String> = []
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count == 6 else { continue }
            let method = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            guard Self.methods.contains(method) else { continue }
            let codes = cells[4].replacingOccurrences(of: "name codes", with: "3, 46, 36, 35, 60")
                .replacingOccurrences(of: "value codes", with: "43, 44, 45, 46, 51, 3")
            for code in Self.numbers(in: codes) { pairs.insert("\(method) \(code)") }
        }
        return pairs
    }

    /// The status of `code` by the document's table (UNKNOWN for a code it does not list).
    func status(of code: Int32) -> StatusCode {
        for line in text.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            // A row of the status table: "| NOT_FOUND (5) | 2 NotFound |".
            guard cells.count == 2,
                let status = StatusCode.allDefined.first(where: { cells[0] == "\($0.name) (\($0.rawValue))" })
            else { continue }
            if Self.numbers(in: cells[1]).contains(code) { return status }
        }
        return .unknown
    }

    /// The short names of the home API's methods (the accessory link's are documented apart).
    static let methods = Set(HomeAPI.methods.map { String($0.name.split(separator: "/").last!) })

    /// The whole numbers of `text` outside parentheses and code spans ("4 / 88" gives both).
    static func numbers(in text: String) -> [Int32] {
        var plain = ""
        var depth = 0
        var inCode = false
        for character in text {
            switch character {
            case "(": depth += 1
            case ")": depth -= 1
            case "`": inCode.toggle()
            default: if depth == 0 && !inCode { plain.append(character) }
            }
        }
        return plain.split { !$0.isNumber && $0 != "-" }.compactMap { Int32($0) }
    }
}

extension Date {
    init(milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
