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
/// The cases are in HomeKitCodeCases.swift and HomeKitCodeCases+Automation.swift, the servers with
/// low limits or a set clock in HomeKitCodeServers.swift.
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
            // A refused call still used its token: its last use is noted, which is not a change.
            let tokens = try await f.owner.listTokens().map { token in
                var unused = token
                unused.lastUsedMs = 0
                return unused
            }
            return (try await home.get(), try await f.owner.listAccounts(), tokens)
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
            + Self.userCases + Self.accountCases + Self.adminCases
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
}
