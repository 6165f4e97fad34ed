import Foundation
import Testing

@testable import HomeService

/// Every operation a caller can ask of a home × {administrator, guest, non-member}, through the store.
@Suite struct PermissionMatrixTests {
    enum Caller: String, CaseIterable, Sendable {
        case administrator
        case guest
        case nonMember
    }

    /// Prepares the operation (as the owner) and returns it, to be run as a given account.
    typealias Staged = (RulesFixture) throws -> (AccountID) throws -> Void

    static let cases: [(HomeOperation, Caller)] = HomeOperation.allCases.flatMap { operation in
        Caller.allCases.map { (operation, $0) }
    }

    @Test(arguments: StoreKind.allCases, cases)
    func operationIsAllowedExactlyForItsRoles(kind: StoreKind, testCase: (HomeOperation, Caller)) throws {
        let (operation, caller) = testCase
        let fixture = try RulesFixture(kind)
        let store = fixture.store
        let guest = try fixture.harness.account("Gina")
        try store.addUser(guest, to: fixture.home.id, role: .guest, as: fixture.owner)
        let stranger = try fixture.harness.account("Sam")
        _ = try store.addHome(named: "Sam's Place", as: stranger)
        let run = try Self.staged(operation)(fixture)
        let account: AccountID =
            switch caller {
            case .administrator: fixture.owner
            case .guest: guest
            case .nonMember: stranger
            }
        let before = StoreSnapshot(store)
        let code = codeThrown { try run(account) }
        let expected: HomeKitErrorCode? =
            switch caller {
            case .administrator: nil
            // A guest who asks to remove the home leaves it instead (only its owner removes it).
            case .guest: operation.isAllowedForGuests || operation == .removeHome ? nil : .insufficientPrivileges
            case .nonMember: .notFound
            }
        #expect(code == expected, "\(operation) as \(caller)")
        if code != nil {
            #expect(StoreSnapshot(store) == before, "a refused \(operation) altered the store")
        }
    }

    /// A non-member learns nothing: asking about a real home, room or accessory of someone else's home
    /// reads exactly like asking about one that does not exist.
    @Test(arguments: StoreKind.allCases)
    func nonMembersCannotTellForeignObjectsFromMissingOnes(kind: StoreKind) throws {
        let fixture = try RulesFixture(kind)
        let stranger = try fixture.harness.account("Sam")
        let store = fixture.store
        func message(_ body: () throws -> Void) -> String? {
            do {
                try body()
                return nil
            } catch {
                return (error as? HomeServiceError).map { "\($0.code.rawValue) \($0.message)" }
            }
        }
        #expect(
            message { _ = try store.home(fixture.home.id, as: stranger) }
                == message { _ = try store.home(.random(), as: stranger) }
        )
        let foreignRoom = RoomID.random()
        #expect(
            message { try store.renameRoom(fixture.kitchen.id, to: "Den", as: stranger) }?
                .replacingOccurrences(of: fixture.kitchen.id.description, with: "ID")
                == message { try store.renameRoom(foreignRoom, to: "Den", as: stranger) }?
                .replacingOccurrences(of: foreignRoom.description, with: "ID")
        )
        #expect(store.homes(of: stranger).isEmpty)
    }

    static func staged(_ operation: HomeOperation) -> Staged {
        switch operation {
        case .readHome:
            return { f in { _ = try f.store.home(f.home.id, as: $0) } }
        case .observeChanges:
            return { f in { _ = try f.store.changes(in: f.home.id, after: 0, as: $0) } }
        case .readCharacteristic:
            return { f in { _ = try f.store.readValue(f.characteristic(Accessories.brightness, on: f.lamp), as: $0) } }
        case .writeCharacteristic:
            return { f in
                { try f.store.writeValue(f.characteristic(Accessories.brightness, on: f.lamp), .int(10), as: $0) }
            }
        case .identifyAccessory:
            return { f in { try f.store.identifyAccessory(f.lamp.id, as: $0) } }
        case .executeActionSet:
            return { f in { _ = try f.store.executeActionSet(f.evening.id, as: $0) } }
        case .enableNotification:
            return { f in { try f.store.enableNotification(f.characteristic(Accessories.on, on: f.lamp), true, as: $0) }
            }
        case .renameHome:
            return { f in { try f.store.renameHome(f.home.id, to: "Villa", as: $0) } }
        case .removeHome:
            return { f in { _ = try f.store.removeHome(f.home.id, as: $0) } }
        case .updateHomeTimeZone:
            return { f in { try f.store.setTimeZone(of: f.home.id, to: "Europe/Berlin", as: $0) } }
        case .addRoom:
            return { f in { _ = try f.store.addRoom(named: "Den", to: f.home.id, as: $0) } }
        case .removeRoom:
            return { f in { try f.store.removeRoom(f.kitchen.id, as: $0) } }
        case .renameRoom:
            return { f in { try f.store.renameRoom(f.kitchen.id, to: "Cookhouse", as: $0) } }
        case .addZone:
            return { f in { _ = try f.store.addZone(named: "Downstairs", to: f.home.id, as: $0) } }
        case .removeZone:
            return { f in { try f.store.removeZone(f.upstairs.id, as: $0) } }
        case .renameZone:
            return { f in { try f.store.renameZone(f.upstairs.id, to: "Top Floor", as: $0) } }
        case .addRoomToZone:
            return { f in { try f.store.addRoom(f.kitchen.id, toZone: f.upstairs.id, as: $0) } }
        case .removeRoomFromZone:
            return { f in
                try f.store.addRoom(f.kitchen.id, toZone: f.upstairs.id, as: f.owner)
                return { try f.store.removeRoom(f.kitchen.id, fromZone: f.upstairs.id, as: $0) }
            }
        case .addAccessory:
            return { f in { _ = try f.store.addAccessory(Accessories.bulb("Desk Lamp"), to: f.home.id, as: $0) } }
        case .removeAccessory:
            return { f in { try f.store.removeAccessory(f.lamp.id, as: $0) } }
        case .renameAccessory:
            return { f in { try f.store.renameAccessory(f.lamp.id, to: "Desk", as: $0) } }
        case .assignAccessoryToRoom:
            return { f in { try f.store.assignAccessory(f.lamp.id, to: f.kitchen.id, as: $0) } }
        case .unblockAccessory:
            return { f in
                try f.store.setBlocked(f.bridge.id, true)
                return { try f.store.unblockAccessory(f.bridge.id, as: $0) }
            }
        case .renameService:
            return { f in { try f.store.renameService(f.lamp.services[0], to: "Reading", as: $0) } }
        case .updateAssociatedServiceType:
            return { f in { try f.store.updateAssociatedServiceType(f.lamp.services[0], to: nil, as: $0) } }
        case .addServiceGroup:
            return { f in { _ = try f.store.addServiceGroup(named: "Lights", to: f.home.id, as: $0) } }
        case .removeServiceGroup:
            return { f in
                let group = try f.store.addServiceGroup(named: "Lights", to: f.home.id, as: f.owner)
                return { try f.store.removeServiceGroup(group.id, as: $0) }
            }
        case .renameServiceGroup:
            return { f in
                let group = try f.store.addServiceGroup(named: "Lights", to: f.home.id, as: f.owner)
                return { try f.store.renameServiceGroup(group.id, to: "Lamps", as: $0) }
            }
        case .addServiceToGroup:
            return { f in
                let group = try f.store.addServiceGroup(named: "Lights", to: f.home.id, as: f.owner)
                return { try f.store.addService(f.lamp.services[0], toGroup: group.id, as: $0) }
            }
        case .removeServiceFromGroup:
            return { f in
                let group = try f.store.addServiceGroup(named: "Lights", to: f.home.id, as: f.owner)
                try f.store.addService(f.lamp.services[0], toGroup: group.id, as: f.owner)
                return { try f.store.removeService(f.lamp.services[0], fromGroup: group.id, as: $0) }
            }
        case .addActionSet:
            return { f in { _ = try f.store.addActionSet(named: "Morning", to: f.home.id, as: $0) } }
        case .removeActionSet:
            return { f in { try f.store.removeActionSet(f.evening.id, as: $0) } }
        case .renameActionSet:
            return { f in { try f.store.renameActionSet(f.evening.id, to: "Dinner", as: $0) } }
        case .addAction:
            return { f in
                let action = CharacteristicWriteAction(
                    characteristic: f.characteristic(Accessories.brightness, on: f.lamp),
                    targetValue: .int(20)
                )
                return { try f.store.addAction(action, to: f.evening.id, as: $0) }
            }
        case .removeAction:
            return { f in { try f.store.removeAction(f.lampOn.id, from: f.evening.id, as: $0) } }
        case .updateActionTargetValue:
            return { f in { try f.store.updateTargetValue(of: f.lampOn.id, in: f.evening.id, to: .bool(false), as: $0) }
            }
        case .addTrigger:
            return { f in { _ = try f.store.addTrigger(named: "Dawn", fireDate: f.now + 60_000, to: f.home.id, as: $0) }
            }
        case .removeTrigger:
            return { f in
                let trigger = try f.trigger()
                return { try f.store.removeTrigger(trigger.id, as: $0) }
            }
        case .renameTrigger:
            return { f in
                let trigger = try f.trigger()
                return { try f.store.renameTrigger(trigger.id, to: "Sunset", as: $0) }
            }
        case .enableTrigger:
            return { f in
                let trigger = try f.trigger()
                try f.store.addActionSet(f.evening.id, toTrigger: trigger.id, as: f.owner)
                return { try f.store.enableTrigger(trigger.id, true, as: $0) }
            }
        case .updateTriggerFireDate:
            return { f in
                let trigger = try f.trigger()
                return { try f.store.updateFireDate(of: trigger.id, to: f.now + 120_000, as: $0) }
            }
        case .updateTriggerRecurrence:
            return { f in
                let trigger = try f.trigger()
                return { try f.store.updateRecurrence(of: trigger.id, to: .hours(1), as: $0) }
            }
        case .addActionSetToTrigger:
            return { f in
                let trigger = try f.trigger()
                return { try f.store.addActionSet(f.evening.id, toTrigger: trigger.id, as: $0) }
            }
        case .removeActionSetFromTrigger:
            return { f in
                let trigger = try f.trigger()
                try f.store.addActionSet(f.evening.id, toTrigger: trigger.id, as: f.owner)
                return { try f.store.removeActionSet(f.evening.id, fromTrigger: trigger.id, as: $0) }
            }
        case .addUser:
            return { f in
                let dave = try f.harness.account("Dave")
                return { try f.store.addUser(dave, to: f.home.id, role: .guest, as: $0) }
            }
        case .removeUser:
            return { f in
                let carol = try f.harness.account("Carol")
                try f.store.addUser(carol, to: f.home.id, role: .guest, as: f.owner)
                return { try f.store.removeUser(UserID(account: carol, home: f.home.id), from: f.home.id, as: $0) }
            }
        case .updateUserAccess:
            return { f in
                let carol = try f.harness.account("Carol")
                try f.store.addUser(carol, to: f.home.id, role: .guest, as: f.owner)
                return {
                    try f.store.updateUserAccess(
                        UserID(account: carol, home: f.home.id),
                        in: f.home.id,
                        role: .administrator,
                        as: $0
                    )
                }
            }
        }
    }
}
