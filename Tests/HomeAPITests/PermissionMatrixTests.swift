import Foundation
import HomeAPI
import HomeClient
import HomeProto
import SwiftProtobuf
import Testing
import Wire

/// Every method × {owner, administrator, guest, non-member, unauthenticated} over RPC, each cell
/// against a fresh home. The expected answer comes from the method's role in `HomeAPI.methods`.
@Suite(.serialized) struct PermissionMatrixTests {
    enum Caller: String, CaseIterable, Sendable {
        case owner, administrator, guest, nonMember, unauthenticated
    }

    /// Accounts shared by every cell, and one home per cell.
    final class Fixture: @unchecked Sendable {
        let server: HomedProcess
        let owner: HomeClient
        var clients: [Caller: HomeClient] = [:]
        var accounts: [Caller: UUID] = [:]
        var homeCount = 0
        let simulators: Simulators
        /// The simulated accessories of the cell in progress, stopped after it (each is a stream).
        var cellSimulators: [SimulatedAccessory] = []

        init(arguments: [String] = []) async throws {
            server = try await HomedProcess.launch(arguments: ["--max-homes-per-account", "100000"] + arguments)
            owner = server.client()
            clients[.owner] = owner
            accounts[.owner] = try await owner.whoAmI().id.uuid
            for caller in [Caller.administrator, .guest, .nonMember] {
                let account = try await owner.createAccount(named: caller.rawValue)
                let (_, secret) = try await owner.issueToken(for: account.id.uuid)
                clients[caller] = server.client(token: secret)
                accounts[caller] = account.id.uuid
            }
            clients[.unauthenticated] = server.client(token: "hrt_" + String(repeating: "0", count: 64))
            simulators = try await Simulators(server)
        }

        /// Pairs `description` into `home` for the cell: its simulator and the accessories added.
        func pair(
            _ description: AccessoryDescription,
            into home: HomeHandle
        ) async throws -> (simulator: SimulatedAccessory, accessories: [Accessory]) {
            let paired = try await simulators.pair(description, into: home)
            cellSimulators.append(paired.simulator)
            return paired
        }

        /// An accessory advertised (unpaired) for the cell: its id.
        func advertise(_ description: AccessoryDescription) async throws -> Data {
            let simulator = SimulatedAccessory(description, setupCode: Simulators.setupCode, link: simulators.link)
            try await simulator.start()
            cellSimulators.append(simulator)
            return await simulator.id.data
        }

        func endCell() async {
            for simulator in cellSimulators { await simulator.stop() }
            cellSimulators = []
        }

        /// A home with one of everything, the administrator and the guest as members.
        func home() async throws -> Objects {
            homeCount += 1
            let home = owner.home(try await owner.addHome(named: "Home \(homeCount)").id.uuid)
            try await home.addUser(accounts[.administrator]!, administrator: true)
            try await home.addUser(accounts[.guest]!)
            let room = try await home.addRoom(named: "Den")
            let zone = try await home.addZone(named: "Upstairs")
            try await home.addRoom(room.id.uuid, toZone: zone.id.uuid)
            let (lampSimulator, lamp) = try await pair(Advertised.bulb("Lamp"), into: home)
            let (bridgeSimulator, bridged) = try await pair(
                Advertised.bridge("Hub", behind: [Advertised.bulb("Porch")]),
                into: home
            )
            let (plugSimulator, plug) = try await pair(Advertised.outletWithSensor("Plug"), into: home)
            let group = try await home.addServiceGroup(named: "Lights")
            try await home.addService(lamp[0].services[0].id.uuid, toGroup: group.id.uuid)
            let actionSet = try await home.addActionSet(named: "Evening")
            let action = UUID()
            try await home.addAction(
                writing: .bool(true),
                to: lamp[0].characteristic(Advertised.on).id.uuid,
                in: actionSet.id.uuid,
                actionID: action
            )
            let fireDate = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.up) * 60 + 3600)
            let trigger = try await home.addTrigger(named: "Dusk", fireDate: fireDate, recurrence: Recurrence(1, .day))
            try await home.addActionSet(actionSet.id.uuid, toTrigger: trigger.id.uuid)
            let extra = try await owner.createAccount(named: "Extra \(homeCount)")
            return Objects(
                home: home.id.data,
                homeName: "Home \(homeCount)",
                room: room.id,
                zone: zone.id,
                lamp: lamp[0],
                bridge: bridged[0],
                porch: bridged[1],
                plug: plug[0],
                lampSimulator: lampSimulator,
                bridgeSimulator: bridgeSimulator,
                plugSimulator: plugSimulator,
                group: group.id,
                actionSet: actionSet.id,
                action: action.data,
                trigger: trigger.id,
                fireDate: Int64(fireDate.timeIntervalSince1970 * 1000),
                extraAccount: extra.id
            )
        }
    }

    struct Objects: Sendable {
        let home: Data
        let homeName: String
        /// "Den", in the zone "Upstairs".
        let room: Data
        let zone: Data
        /// "Lamp" (a dimmable bulb in the group "Lights", its On in the action set "Evening").
        let lamp: Accessory
        /// "Hub", with "Porch" behind it.
        let bridge: Accessory
        let porch: Accessory
        /// "Plug": an outlet and a temperature sensor.
        let plug: Accessory
        let lampSimulator: SimulatedAccessory
        let bridgeSimulator: SimulatedAccessory
        let plugSimulator: SimulatedAccessory
        let group: Data
        /// "Evening", attached to the trigger "Dusk" (daily, an hour ahead, disabled).
        let actionSet: Data
        let action: Data
        let trigger: Data
        let fireDate: Int64
        let extraAccount: Data
        var on: Data { lamp.characteristic(Advertised.on).id }
        var brightness: Data { lamp.characteristic(Advertised.brightness).id }
    }

    /// A valid request for each method, for the given caller.
    static func request(
        for method: String,
        _ o: Objects,
        caller: Caller,
        _ f: Fixture
    ) async throws -> any SwiftProtobuf.Message {
        switch method {
        case "ListHomes": return Home_V1_ListHomesRequest()
        case "GetHome": return Home_V1_GetHomeRequest.with { $0.homeID = o.home }
        case "AddHome": return Home_V1_AddHomeRequest.with { $0.name = "New \(UUID().uuidString.prefix(8))" }
        case "RemoveHome": return Home_V1_RemoveHomeRequest.with { $0.homeID = o.home }
        case "RenameHome":
            return Home_V1_RenameHomeRequest.with {
                $0.homeID = o.home
                $0.name = "Renamed \(f.homeCount)"
            }
        case "SetPrimaryHome": return Home_V1_SetPrimaryHomeRequest.with { $0.homeID = o.home }
        case "SetHomeTimeZone":
            return Home_V1_SetHomeTimeZoneRequest.with {
                $0.homeID = o.home
                $0.timeZone = "Asia/Tokyo"
            }
        case "AddRoom":
            return Home_V1_AddRoomRequest.with {
                $0.homeID = o.home
                $0.name = "Hall"
            }
        case "RemoveRoom":
            return Home_V1_RemoveRoomRequest.with {
                $0.homeID = o.home
                $0.roomID = o.room
            }
        case "RenameRoom":
            return Home_V1_RenameRoomRequest.with {
                $0.homeID = o.home
                $0.roomID = o.room
                $0.name = "Study"
            }
        case "AddZone":
            return Home_V1_AddZoneRequest.with {
                $0.homeID = o.home
                $0.name = "Downstairs"
            }
        case "RemoveZone":
            return Home_V1_RemoveZoneRequest.with {
                $0.homeID = o.home
                $0.zoneID = o.zone
            }
        case "RenameZone":
            return Home_V1_RenameZoneRequest.with {
                $0.homeID = o.home
                $0.zoneID = o.zone
                $0.name = "Top"
            }
        case "AddRoomToZone":
            let room = try await f.owner.home(o.home.uuid).addRoom(named: "Loft")
            return Home_V1_AddRoomToZoneRequest.with {
                $0.homeID = o.home
                $0.zoneID = o.zone
                $0.roomID = room.id
            }
        case "RemoveRoomFromZone":
            return Home_V1_RemoveRoomFromZoneRequest.with {
                $0.homeID = o.home
                $0.zoneID = o.zone
                $0.roomID = o.room
            }
        case "AddAccessory":
            let advertised = try await f.advertise(Advertised.bulb("Desk"))
            return Home_V1_AddAccessoryRequest.with {
                $0.homeID = o.home
                $0.accessoryID = advertised
                $0.setupCode = Simulators.setupCode
            }
        case "RemoveAccessory":
            return Home_V1_RemoveAccessoryRequest.with {
                $0.homeID = o.home
                $0.accessoryID = o.lamp.id
            }
        case "RenameAccessory":
            return Home_V1_RenameAccessoryRequest.with {
                $0.homeID = o.home
                $0.accessoryID = o.lamp.id
                $0.name = "Torch"
            }
        case "AssignAccessoryToRoom":
            return Home_V1_AssignAccessoryToRoomRequest.with {
                $0.homeID = o.home
                $0.accessoryID = o.lamp.id
                $0.roomID = o.room
            }
        case "IdentifyAccessory":
            return Home_V1_IdentifyAccessoryRequest.with {
                $0.homeID = o.home
                $0.accessoryID = o.lamp.id
            }
        case "UnblockAccessory":
            return Home_V1_UnblockAccessoryRequest.with {
                $0.homeID = o.home
                $0.accessoryID = o.bridge.id
            }
        case "RenameService":
            return Home_V1_RenameServiceRequest.with {
                $0.homeID = o.home
                $0.serviceID = o.lamp.services[0].id
                $0.name = "Glow"
            }
        case "UpdateAssociatedServiceType":
            return Home_V1_UpdateAssociatedServiceTypeRequest.with {
                $0.homeID = o.home
                $0.serviceID = o.plug.services[0].id
                $0.associatedType = Advertised.lightbulb
            }
        case "ListServicesWithTypes":
            return Home_V1_ListServicesWithTypesRequest.with {
                $0.homeID = o.home
                $0.types = [Advertised.lightbulb]
            }
        case "ReadCharacteristic":
            return Home_V1_ReadCharacteristicRequest.with {
                $0.homeID = o.home
                $0.characteristicID = o.brightness
            }
        case "WriteCharacteristic":
            return Home_V1_WriteCharacteristicRequest.with {
                $0.homeID = o.home
                $0.characteristicID = o.brightness
                $0.value = .int(60)
            }
        case "EnableNotification":
            return Home_V1_EnableNotificationRequest.with {
                $0.homeID = o.home
                $0.characteristicID = o.brightness
                $0.enable = true
            }
        case "ReadCharacteristicMetadata":
            return Home_V1_ReadCharacteristicMetadataRequest.with {
                $0.homeID = o.home
                $0.characteristicID = o.brightness
            }
        case "AddServiceGroup":
            return Home_V1_AddServiceGroupRequest.with {
                $0.homeID = o.home
                $0.name = "Fans"
            }
        case "RemoveServiceGroup":
            return Home_V1_RemoveServiceGroupRequest.with {
                $0.homeID = o.home
                $0.serviceGroupID = o.group
            }
        case "RenameServiceGroup":
            return Home_V1_RenameServiceGroupRequest.with {
                $0.homeID = o.home
                $0.serviceGroupID = o.group
                $0.name = "Glows"
            }
        case "AddServiceToGroup":
            return Home_V1_AddServiceToGroupRequest.with {
                $0.homeID = o.home
                $0.serviceGroupID = o.group
                $0.serviceID = o.plug.services[0].id
            }
        case "RemoveServiceFromGroup":
            return Home_V1_RemoveServiceFromGroupRequest.with {
                $0.homeID = o.home
                $0.serviceGroupID = o.group
                $0.serviceID = o.lamp.services[0].id
            }
        case "AddActionSet":
            return Home_V1_AddActionSetRequest.with {
                $0.homeID = o.home
                $0.name = "Morning Run"
            }
        case "RemoveActionSet":
            return Home_V1_RemoveActionSetRequest.with {
                $0.homeID = o.home
                $0.actionSetID = o.actionSet
            }
        case "RenameActionSet":
            return Home_V1_RenameActionSetRequest.with {
                $0.homeID = o.home
                $0.actionSetID = o.actionSet
                $0.name = "Late"
            }
        case "AddAction":
            return Home_V1_AddActionRequest.with {
                $0.homeID = o.home
                $0.actionSetID = o.actionSet
                $0.action.characteristicID = o.brightness
                $0.action.targetValue = .int(5)
            }
        case "RemoveAction":
            return Home_V1_RemoveActionRequest.with {
                $0.homeID = o.home
                $0.actionSetID = o.actionSet
                $0.actionID = o.action
            }
        case "UpdateActionTargetValue":
            return Home_V1_UpdateActionTargetValueRequest.with {
                $0.homeID = o.home
                $0.actionSetID = o.actionSet
                $0.actionID = o.action
                $0.targetValue = .bool(false)
            }
        case "ExecuteActionSet":
            return Home_V1_ExecuteActionSetRequest.with {
                $0.homeID = o.home
                $0.actionSetID = o.actionSet
            }
        case "AddTrigger":
            return Home_V1_AddTriggerRequest.with {
                $0.homeID = o.home
                $0.name = "Dawn"
                $0.fireDateMs = o.fireDate
            }
        case "RemoveTrigger":
            return Home_V1_RemoveTriggerRequest.with {
                $0.homeID = o.home
                $0.triggerID = o.trigger
            }
        case "RenameTrigger":
            return Home_V1_RenameTriggerRequest.with {
                $0.homeID = o.home
                $0.triggerID = o.trigger
                $0.name = "Twilight"
            }
        case "EnableTrigger":
            return Home_V1_EnableTriggerRequest.with {
                $0.homeID = o.home
                $0.triggerID = o.trigger
                $0.enable = true
            }
        case "UpdateTriggerFireDate":
            return Home_V1_UpdateTriggerFireDateRequest.with {
                $0.homeID = o.home
                $0.triggerID = o.trigger
                $0.fireDateMs = o.fireDate + 60_000
            }
        case "UpdateTriggerRecurrence":
            return Home_V1_UpdateTriggerRecurrenceRequest.with {
                $0.homeID = o.home
                $0.triggerID = o.trigger
                $0.recurrence = Recurrence(2, .hour)
            }
        case "AddActionSetToTrigger":
            let spare = try await f.owner.home(o.home.uuid).addActionSet(named: "Spare")
            return Home_V1_AddActionSetToTriggerRequest.with {
                $0.homeID = o.home
                $0.triggerID = o.trigger
                $0.actionSetID = spare.id
            }
        case "RemoveActionSetFromTrigger":
            return Home_V1_RemoveActionSetFromTriggerRequest.with {
                $0.homeID = o.home
                $0.triggerID = o.trigger
                $0.actionSetID = o.actionSet
            }
        case "ListUsers": return Home_V1_ListUsersRequest.with { $0.homeID = o.home }
        case "AddUser":
            return Home_V1_AddUserRequest.with {
                $0.homeID = o.home
                $0.accountID = o.extraAccount
            }
        case "RemoveUser":
            let user = try await f.owner.home(o.home.uuid).addUser(o.extraAccount.uuid)
            return Home_V1_RemoveUserRequest.with {
                $0.homeID = o.home
                $0.userID = user.id
            }
        case "UpdateUserAccess":
            let user = try await f.owner.home(o.home.uuid).addUser(o.extraAccount.uuid)
            return Home_V1_UpdateUserAccessRequest.with {
                $0.homeID = o.home
                $0.userID = user.id
                $0.administrator = true
            }
        case "WhoAmI": return Home_V1_WhoAmIRequest()
        case "CreateAccount": return Home_V1_CreateAccountRequest.with { $0.name = "Newcomer" }
        case "ListAccounts": return Home_V1_ListAccountsRequest()
        case "IssueToken": return Home_V1_IssueTokenRequest()
        case "RevokeToken":
            // The caller's own spare token (the owner issues it, for every caller alike).
            let account = f.accounts[caller] ?? f.accounts[.owner]!
            let (token, _) = try await f.owner.issueToken(for: account)
            return Home_V1_RevokeTokenRequest.with { $0.tokenID = token.id }
        case "ListTokens": return Home_V1_ListTokensRequest()
        case "BackupStore":
            return Home_V1_BackupStoreRequest.with {
                $0.fileName = "backup-\(UUID().uuidString).sqlite"
            }
        case "BrowseAccessories":
            // Something for the browser to show.
            _ = try await f.advertise(Advertised.bulb("Shown"))
            return Home_V1_BrowseAccessoriesRequest()
        case "Subscribe":
            return Home_V1_SubscribeRequest.with {
                $0.homeIds = [o.home]
                $0.snapshot = true
            }
        default: throw HomedFailure(message: "no request for \(method)")
        }
    }

    /// What a caller gets: `nil` for success, else the status and HomeKit code.
    static func expected(_ method: APIMethod, _ caller: Caller) -> (StatusCode, Int32?)? {
        if caller == .unauthenticated { return (.unauthenticated, nil) }
        let denied: (StatusCode, Int32?)? =
            switch (method.role, caller) {
            case (.anyAccount, _): nil
            case (.serverOwner, .owner): nil
            case (.serverOwner, _): (.permissionDenied, 17)
            case (_, .nonMember): (.notFound, 2)
            case (.administrator, .guest): (.permissionDenied, 17)
            default: nil
            }
        return denied
    }

    @Test func everyMethodForEveryCaller() async throws {
        let fixture = try await Fixture()
        var cells = 0
        for method in HomeAPI.methods {
            let short = String(method.name.split(separator: "/").last!)
            for caller in Caller.allCases {
                let objects = try await fixture.home()
                let request = try await Self.request(for: short, objects, caller: caller, fixture)
                let client = fixture.clients[caller]!
                var outcome: (StatusCode, Int32?)?
                do {
                    if short == "BrowseAccessories" {
                        var browser = try await client.browseAccessories().makeAsyncIterator()
                        _ = try await browser.next()
                    } else if method.isStreaming {
                        // The stream's first message (the home's snapshot) or its failure.
                        var stream = client.changes(ChangeOptions(homes: [objects.home.uuid], snapshot: true))
                            .makeAsyncIterator()
                        _ = try await stream.next()
                    } else {
                        _ = try await client.call(method.name, request, returning: Google_Protobuf_Empty.self)
                    }
                } catch let error as HomeClientError {
                    outcome = (error.status, error.homeKitCode)
                }
                let expected = Self.expected(method, caller)
                let matches =
                    outcome?.0 == expected?.0 && (expected?.1 == nil || outcome?.1 == expected?.1)
                await fixture.endCell()
                #expect(
                    matches,
                    "\(short) as \(caller): got \(outcome.map { "\($0.0.name) \($0.1 ?? 0)" } ?? "OK"), expected \(expected.map { "\($0.0.name) \($0.1 ?? 0)" } ?? "OK")"
                )
                cells += 1
            }
        }
        #expect(cells == HomeAPI.methods.count * Caller.allCases.count)
        for client in fixture.clients.values { await client.close() }
        await fixture.simulators.close()
    }
}

/// The SDK's method table (what `rpc-client call` uses) matches the server's.
@Suite struct MethodTableTests {
    @Test func theClientKnowsEveryServerMethodWithItsTypes() {
        let server = HomeAPI.methods.map { "\($0.name) \($0.requestType) \($0.responseType) \($0.isStreaming)" }
        let services = ["home.v1.HomeService/", "home.v1.AccountService/", "home.v1.AdminService/"]
        let client = MethodTypes.all.filter { entry in services.contains { entry.name.hasPrefix($0) } }
            .map { "\($0.name) \($0.request.protoMessageName) \($0.response.protoMessageName) \($0.isStreaming)" }
        // The same methods; the order is each one's own (the server registers by handler file).
        #expect(Set(client) == Set(server))
        #expect(client.count == server.count)
    }
}

/// docs/API.md names every method with the role the server enforces.
@Suite struct APIDocumentTests {
    @Test func everyMethodIsDocumentedWithItsRole() throws {
        let text = try APIDocument.load().text
        for method in HomeAPI.methods {
            let short = method.name.split(separator: "/").last!
            let row = text.split(separator: "\n").first { $0.hasPrefix("| `\(short)` |") }
            #expect(row != nil, "docs/API.md has no row for \(short)")
            let role = method.role == .member ? "member" : method.role.rawValue
            #expect(row?.contains("| \(role) |") == true, "docs/API.md gives \(short) another role than \(role)")
        }
    }
}
