import Foundation
import HomeProto
import HomeService
import RPCServer
import RPCServices

/// `home.v1.HomeService`: every operation of HOMEKIT.md's table.
enum HomeMethods {
    static let service = "home.v1.HomeService/"

    static var all: [APIMethod] {
        homes + roomsAndZones + accessories + characteristics + groups + actionSets + triggers + users
    }

    // MARK: Homes

    static let homes: [APIMethod] = [
        .read(service + "ListHomes", Home_V1_ListHomesRequest.self, Home_V1_ListHomesResponse.self) {
            api,
            _,
            caller throws(APIFailure) in
            var response = Home_V1_ListHomesResponse()
            response.homes = api.store.homes(of: caller.account).filter { caller.principal.mayActIn($0.id) }
                .map { api.homeSummary($0, caller) }
            return response
        },
        .encodedRead(service + "GetHome", Home_V1_GetHomeRequest.self, Home_V1_GetHomeResponse.self) {
            api,
            request,
            caller throws(APIFailure) in
            let id = try api.homeID(request.homeID)
            let view = try attempt(object: id.raw) { () throws(HomeServiceError) in
                try api.store.view(of: id, as: caller.account)
            }
            // GetHomeResponse: the home is field 1, its only field.
            return HomeEncoder.encode(view, caller: caller.account, in: [([], 1)])
        },
        .mutation(service + "AddHome", Home_V1_AddHomeRequest.self, Home_V1_AddHomeResponse.self) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try attempt(field: "name") { () throws(HomeServiceError) in
                try api.store.addHome(named: request.name, as: caller.account)
            }
            var response = Home_V1_AddHomeResponse()
            response.home = api.homeSummary(home, caller)
            return response
        },
        .mutation(
            service + "RemoveHome",
            Home_V1_RemoveHomeRequest.self,
            Home_V1_RemoveHomeResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let id = try api.homeID(request.homeID)
            let removal = try attempt(object: id.raw) { () throws(HomeServiceError) in
                try api.store.removeHome(id, as: caller.account)
            }
            var response = Home_V1_RemoveHomeResponse()
            response.removed = removal == .removed
            return response
        },
        .mutation(
            service + "RenameHome",
            Home_V1_RenameHomeRequest.self,
            Home_V1_RenameHomeResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let id = try api.homeID(request.homeID)
            try attempt(object: id.raw, field: "name") { () throws(HomeServiceError) in
                try api.store.renameHome(id, to: request.name, as: caller.account)
            }
            var response = Home_V1_RenameHomeResponse()
            response.home = api.homeSummary(
                try attempt { () throws(HomeServiceError) in try api.store.home(id, as: caller.account) },
                caller
            )
            return response
        },
        .mutation(
            service + "SetPrimaryHome",
            Home_V1_SetPrimaryHomeRequest.self,
            Home_V1_SetPrimaryHomeResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let id = try api.homeID(request.homeID)
            try attempt(object: id.raw) { () throws(HomeServiceError) in
                try api.store.setPrimaryHome(id, as: caller.account)
            }
            return Home_V1_SetPrimaryHomeResponse()
        },
        .mutation(
            service + "SetHomeTimeZone",
            Home_V1_SetHomeTimeZoneRequest.self,
            Home_V1_SetHomeTimeZoneResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let id = try api.homeID(request.homeID)
            try attempt(object: id.raw, field: "time_zone") { () throws(HomeServiceError) in
                try api.store.setTimeZone(of: id, to: request.timeZone, as: caller.account)
            }
            return Home_V1_SetHomeTimeZoneResponse()
        },
    ]

    // MARK: Rooms and zones

    static let roomsAndZones: [APIMethod] = [
        .mutation(service + "AddRoom", Home_V1_AddRoomRequest.self, Home_V1_AddRoomResponse.self) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let room = try attempt(field: "name") { () throws(HomeServiceError) in
                try api.store.addRoom(named: request.name, to: home, as: caller.account)
            }
            var response = Home_V1_AddRoomResponse()
            response.room = ProtoEncoding.room(room)
            return response
        },
        .mutation(
            service + "RemoveRoom",
            Home_V1_RemoveRoomRequest.self,
            Home_V1_RemoveRoomResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let room: RoomID = try api.object(request.roomID, "room_id", in: home, caller)
            try attempt(object: room.raw) { () throws(HomeServiceError) in
                try api.store.removeRoom(room, as: caller.account)
            }
            return Home_V1_RemoveRoomResponse()
        },
        .mutation(
            service + "RenameRoom",
            Home_V1_RenameRoomRequest.self,
            Home_V1_RenameRoomResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let room: RoomID = try api.object(request.roomID, "room_id", in: home, caller)
            try attempt(object: room.raw, field: "name") { () throws(HomeServiceError) in
                try api.store.renameRoom(room, to: request.name, as: caller.account)
            }
            var response = Home_V1_RenameRoomResponse()
            response.room = try api.roomMessage(room, caller)
            return response
        },
        .mutation(service + "AddZone", Home_V1_AddZoneRequest.self, Home_V1_AddZoneResponse.self) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let zone = try attempt(field: "name") { () throws(HomeServiceError) in
                try api.store.addZone(named: request.name, to: home, as: caller.account)
            }
            var response = Home_V1_AddZoneResponse()
            response.zone = ProtoEncoding.zone(zone)
            return response
        },
        .mutation(
            service + "RemoveZone",
            Home_V1_RemoveZoneRequest.self,
            Home_V1_RemoveZoneResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let zone: ZoneID = try api.object(request.zoneID, "zone_id", in: home, caller)
            try attempt(object: zone.raw) { () throws(HomeServiceError) in
                try api.store.removeZone(zone, as: caller.account)
            }
            return Home_V1_RemoveZoneResponse()
        },
        .mutation(
            service + "RenameZone",
            Home_V1_RenameZoneRequest.self,
            Home_V1_RenameZoneResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let zone: ZoneID = try api.object(request.zoneID, "zone_id", in: home, caller)
            try attempt(object: zone.raw, field: "name") { () throws(HomeServiceError) in
                try api.store.renameZone(zone, to: request.name, as: caller.account)
            }
            var response = Home_V1_RenameZoneResponse()
            response.zone = try api.zoneMessage(zone, caller)
            return response
        },
        .mutation(
            service + "AddRoomToZone",
            Home_V1_AddRoomToZoneRequest.self,
            Home_V1_AddRoomToZoneResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let zone: ZoneID = try api.object(request.zoneID, "zone_id", in: home, caller)
            let room: RoomID = try api.object(request.roomID, "room_id", in: home, caller)
            try attempt(object: room.raw, field: "room_id") { () throws(HomeServiceError) in
                try api.store.addRoom(room, toZone: zone, as: caller.account)
            }
            var response = Home_V1_AddRoomToZoneResponse()
            response.zone = try api.zoneMessage(zone, caller)
            return response
        },
        .mutation(
            service + "RemoveRoomFromZone",
            Home_V1_RemoveRoomFromZoneRequest.self,
            Home_V1_RemoveRoomFromZoneResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let zone: ZoneID = try api.object(request.zoneID, "zone_id", in: home, caller)
            let room: RoomID = try ProtoDecoding.id(request.roomID, "room_id")
            try attempt(object: room.raw, field: "room_id") { () throws(HomeServiceError) in
                try api.store.removeRoom(room, fromZone: zone, as: caller.account)
            }
            var response = Home_V1_RemoveRoomFromZoneResponse()
            response.zone = try api.zoneMessage(zone, caller)
            return response
        },
    ]

    // MARK: Accessories and services

    static let accessories: [APIMethod] = [
        .mutation(
            service + "AddAccessory",
            Home_V1_AddAccessoryRequest.self,
            Home_V1_AddAccessoryResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: AccessoryID = try ProtoDecoding.id(request.accessoryID, "accessory_id")
            let added = try api.links.pair(id, setupCode: request.setupCode, into: home, as: caller.account)
            var response = Home_V1_AddAccessoryResponse()
            for accessory in added { response.accessories.append(try api.accessoryMessage(accessory.id, caller)) }
            return response
        },
        .mutation(
            service + "RemoveAccessory",
            Home_V1_RemoveAccessoryRequest.self,
            Home_V1_RemoveAccessoryResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let accessory: AccessoryID = try api.object(request.accessoryID, "accessory_id", in: home, caller)
            try attempt(object: accessory.raw) { () throws(HomeServiceError) in
                try api.store.removeAccessory(accessory, as: caller.account)
            }
            return Home_V1_RemoveAccessoryResponse()
        },
        .mutation(
            service + "RenameAccessory",
            Home_V1_RenameAccessoryRequest.self,
            Home_V1_RenameAccessoryResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let accessory: AccessoryID = try api.object(request.accessoryID, "accessory_id", in: home, caller)
            try attempt(object: accessory.raw, field: "name") { () throws(HomeServiceError) in
                try api.store.renameAccessory(accessory, to: request.name, as: caller.account)
            }
            var response = Home_V1_RenameAccessoryResponse()
            response.accessory = try api.accessoryMessage(accessory, caller)
            return response
        },
        .mutation(
            service + "AssignAccessoryToRoom",
            Home_V1_AssignAccessoryToRoomRequest.self,
            Home_V1_AssignAccessoryToRoomResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let accessory: AccessoryID = try api.object(request.accessoryID, "accessory_id", in: home, caller)
            let room: RoomID = try api.object(request.roomID, "room_id", in: home, caller)
            try attempt(object: room.raw, field: "room_id") { () throws(HomeServiceError) in
                try api.store.assignAccessory(accessory, to: room, as: caller.account)
            }
            var response = Home_V1_AssignAccessoryToRoomResponse()
            response.accessory = try api.accessoryMessage(accessory, caller)
            return response
        },
        .forwarded(
            service + "IdentifyAccessory",
            Home_V1_IdentifyAccessoryRequest.self,
            Home_V1_IdentifyAccessoryResponse.self
        ) {
            api,
            call,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let accessory: AccessoryID = try api.object(request.accessoryID, "accessory_id", in: home, caller)
            try attempt(object: accessory.raw) { () throws(HomeServiceError) in
                try api.store.identifyAccessory(accessory, as: caller.account)
            }
            api.links.forward(.identify, to: accessory, deadline: call.deadline) { result in
                switch result {
                case .success: call.respond(with: Home_V1_IdentifyAccessoryResponse())
                case .failure(let error): call.fail(APIFailure(error, object: accessory.raw).status)
                }
            }
        },
        .mutation(
            service + "UnblockAccessory",
            Home_V1_UnblockAccessoryRequest.self,
            Home_V1_UnblockAccessoryResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let accessory: AccessoryID = try api.object(request.accessoryID, "accessory_id", in: home, caller)
            try attempt(object: accessory.raw) { () throws(HomeServiceError) in
                try api.store.unblockAccessory(accessory, as: caller.account)
            }
            var response = Home_V1_UnblockAccessoryResponse()
            response.accessory = try api.accessoryMessage(accessory, caller)
            return response
        },
        .mutation(
            service + "RenameService",
            Home_V1_RenameServiceRequest.self,
            Home_V1_RenameServiceResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let serviceID: ServiceID = try api.object(request.serviceID, "service_id", in: home, caller)
            try attempt(object: serviceID.raw, field: "name") { () throws(HomeServiceError) in
                try api.store.renameService(serviceID, to: request.name, as: caller.account)
            }
            var response = Home_V1_RenameServiceResponse()
            response.service = try api.serviceMessage(serviceID, caller)
            return response
        },
        .mutation(
            service + "UpdateAssociatedServiceType",
            Home_V1_UpdateAssociatedServiceTypeRequest.self,
            Home_V1_UpdateAssociatedServiceTypeResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let serviceID: ServiceID = try api.object(request.serviceID, "service_id", in: home, caller)
            try attempt(object: serviceID.raw, field: "associated_type") { () throws(HomeServiceError) in
                try api.store.updateAssociatedServiceType(
                    serviceID,
                    to: request.associatedType.isEmpty ? nil : request.associatedType,
                    as: caller.account
                )
            }
            var response = Home_V1_UpdateAssociatedServiceTypeResponse()
            response.service = try api.serviceMessage(serviceID, caller)
            return response
        },
        .read(
            service + "ListServicesWithTypes",
            Home_V1_ListServicesWithTypesRequest.self,
            Home_V1_ListServicesWithTypesResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let found = try attempt(object: home.raw) { () throws(HomeServiceError) in
                try api.store.services(ofTypes: request.types, in: home, as: caller.account)
            }
            var response = Home_V1_ListServicesWithTypesResponse()
            response.services = found.map { ProtoEncoding.service($0) { api.characteristicState($0, caller) } }
            return response
        },
    ]

    // MARK: Characteristics

    static let characteristics: [APIMethod] = [
        .forwarded(
            service + "ReadCharacteristic",
            Home_V1_ReadCharacteristicRequest.self,
            Home_V1_ReadCharacteristicResponse.self,
            shortcut: CachedReadRequest.shortcut
        ) {
            api,
            call,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            guard request.fresh else {
                let id: CharacteristicID = try ProtoDecoding.id(request.characteristicID, "characteristic_id")
                try CachedReadRequest.answer(api, call, id, in: home, caller)
                return
            }
            let id: CharacteristicID = try api.object(request.characteristicID, "characteristic_id", in: home, caller)
            let accessory = try attempt(object: id.raw) { () throws(HomeServiceError) in
                try api.store.checkFreshRead(id, as: caller.account)
            }
            api.links.forward(.read(id), to: accessory, deadline: call.deadline) { result in
                let (answer, ticket) = api.store.write { () throws(APIFailure) -> Home_V1_ReadCharacteristicResponse in
                    let value = try result.get(object: id.raw)
                    guard let value, let reporter = api.store.linkAccessory(of: accessory) else {
                        throw APIFailure(HomeServiceError(.notFound, "the characteristic was removed"), object: id.raw)
                    }
                    _ = try attempt(object: id.raw) { () throws(HomeServiceError) in
                        try api.store.recordReadValue(id, value, by: reporter)
                    }
                    return Home_V1_ReadCharacteristicResponse(
                        try attempt(object: id.raw) { () throws(HomeServiceError) in
                            try api.store.readValue(id, as: caller.account)
                        }
                    )
                }
                api.reply(call, with: Outcome(answer), after: ticket)
            }
        },
        .forwarded(
            service + "WriteCharacteristic",
            Home_V1_WriteCharacteristicRequest.self,
            Home_V1_WriteCharacteristicResponse.self,
            shortcut: CharacteristicWrite.shortcut
        ) {
            api,
            call,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: CharacteristicID = try api.object(request.characteristicID, "characteristic_id", in: home, caller)
            let value = try ProtoDecoding.value(request.value, "value")
            try CharacteristicWrite.forward(api, call, id, value, caller)
        },
        .read(
            service + "EnableNotification",
            Home_V1_EnableNotificationRequest.self,
            Home_V1_EnableNotificationResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: CharacteristicID = try api.object(request.characteristicID, "characteristic_id", in: home, caller)
            try attempt(object: id.raw) { () throws(HomeServiceError) in
                try api.store.enableNotification(id, request.enable, as: caller.account)
            }
            return Home_V1_EnableNotificationResponse()
        },
        .read(
            service + "ReadCharacteristicMetadata",
            Home_V1_ReadCharacteristicMetadataRequest.self,
            Home_V1_ReadCharacteristicMetadataResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: CharacteristicID = try api.object(request.characteristicID, "characteristic_id", in: home, caller)
            let state = try attempt(object: id.raw) { () throws(HomeServiceError) in
                try api.store.characteristicState(id, as: caller.account)
            }
            var response = Home_V1_ReadCharacteristicMetadataResponse()
            response.characteristic = ProtoEncoding.characteristic(state)
            return response
        },
    ]
}
