import Foundation
import HomeAPI
import HomeClient
import HomeProto
import Testing
import Wire

/// The cases of ``HomeKitCodeTests``: homes, rooms and zones, accessories and services,
/// characteristics, service groups, users and accounts (action sets and triggers are in
/// HomeKitCodeCases+Automation.swift).
extension HomeKitCodeTests {
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

    /// The largest value `unsigned_value` carries (past `Int64`).
    static var largestUnsigned: CharacteristicValue {
        var value = CharacteristicValue()
        value.unsignedValue = UInt64.max
        return value
    }

    /// The value codes (27, 43, 44, 45, 46, 51, 3) of a method that takes a characteristic's value.
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
            (27, "no value", brightness, .int(10), CharacteristicValue()),
            (43, "a bool for a number", brightness, .int(10), .bool(true)),
            (
                43, "an unsigned value past Int64 for a bool", { s in s.o.plug.characteristic(Advertised.on).id.uuid },
                .bool(true), largestUnsigned
            ),
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
        Case("RemoveUser", 2, "a member's account id, not their user id") { s in
            { try await s.home.removeUser(s.f.accounts[.guest]!) }
        },
        Case("RemoveUser", 48, "the owner") { s in
            let owner = try await s.home.listUsers().first { $0.owner }!.id.uuid
            return { try await s.home.removeUser(owner) }
        },
        Case("UpdateUserAccess", 2, "not a member") { s in
            { _ = try await s.home.updateUserAccess(s.o.extraAccount.uuid, administrator: true) }
        },
        Case("UpdateUserAccess", 48, "the owner") { s in
            let owner = try await s.home.listUsers().first { $0.owner }!.id.uuid
            return { _ = try await s.home.updateUserAccess(owner, administrator: false) }
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
        Case("IssueToken", 3, "a name past 64 bytes") { s in
            { _ = try await s.f.owner.issueToken(limits: TokenRequestLimits(name: String(repeating: "n", count: 65))) }
        },
        Case("RevokeToken", 2, "no such token") { s in { try await s.f.owner.revokeToken(UUID()) } },
        Case("RevokeToken", 17, "a wider token than the caller's") { s in
            let (_, secret) = try await s.f.owner.issueToken(limits: TokenRequestLimits(lifetime: .seconds(600)))
            let (unlimited, _) = try await s.f.owner.issueToken()
            return {
                let client = s.f.server.client(token: secret)
                defer { Task { await client.close() } }
                try await client.revokeToken(unlimited.id.uuid)
            }
        },
        Case("ListTokens", 2, "no such account") { s in { _ = try await s.f.owner.listTokens(of: UUID()) } },
        Case("ListTokens", 17, "another account's") { s in
            { _ = try await s.f.clients[.guest]!.listTokens(of: s.f.accounts[.administrator]!) }
        },
    ]

    static let adminCases: [Case] = [
        Case("BackupStore", 17, "an administrator") { s in
            { _ = try await s.f.clients[.administrator]!.backupStore(named: "refused.sqlite") }
        },
        Case("BackupStore", 3, "a path, not a file name") { s in
            { _ = try await s.f.owner.backupStore(named: "/tmp/backup.sqlite") }
        },
        Case("BackupStore", 1, "the store's own name, in its directory") { s in
            { _ = try await s.f.owner.backupStore(named: "homed.sqlite") }
        },
    ]
}
