public import Foundation
public import HomeProto
import SwiftProtobuf

// Typed calls for everything in one home. Failures throw ``HomeClientError``; mutations answer once
// durable.

/// Everything that happens in one home: `client.home(id).addRoom(named: "卧室")`.
public struct HomeHandle: Sendable {
    /// The client the calls go through.
    public let client: HomeClient
    /// The home's id.
    public let id: UUID

    private func call<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: String,
        _ request: Request,
        _ response: Response.Type
    ) async throws(HomeClientError) -> Response {
        try await client.call(homeService + method, request, returning: response)
    }

    private func mutate<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: String,
        _ request: Request,
        _ response: Response.Type
    ) async throws(HomeClientError) -> Response {
        try await client.mutate(homeService + method, request, returning: response)
    }

    // MARK: The home

    /// The home with everything in it.
    public func get() async throws(HomeClientError) -> Home {
        var request = Home_V1_GetHomeRequest()
        request.homeID = id.data
        return try await call("GetHome", request, Home_V1_GetHomeResponse.self).home
    }

    /// Removes the home (its owner) or leaves it (anyone else). - Returns: whether it was removed.
    @discardableResult
    public func remove() async throws(HomeClientError) -> Bool {
        var request = Home_V1_RemoveHomeRequest()
        request.homeID = id.data
        return try await mutate("RemoveHome", request, Home_V1_RemoveHomeResponse.self).removed
    }

    /// Renames the home; answers with it without its contents, as ``HomeClient/listHomes()`` does.
    @discardableResult
    public func rename(to name: String) async throws(HomeClientError) -> Home {
        var request = Home_V1_RenameHomeRequest()
        request.homeID = id.data
        request.name = name
        return try await mutate("RenameHome", request, Home_V1_RenameHomeResponse.self).home
    }

    /// Makes this the caller's primary home (HomeKit's `updatePrimaryHome`).
    public func makePrimary() async throws(HomeClientError) {
        var request = Home_V1_SetPrimaryHomeRequest()
        request.homeID = id.data
        _ = try await mutate("SetPrimaryHome", request, Home_V1_SetPrimaryHomeResponse.self)
    }

    /// Sets the IANA time zone the home's triggers count days and weeks in.
    public func setTimeZone(_ timeZone: String) async throws(HomeClientError) {
        var request = Home_V1_SetHomeTimeZoneRequest()
        request.homeID = id.data
        request.timeZone = timeZone
        _ = try await mutate("SetHomeTimeZone", request, Home_V1_SetHomeTimeZoneResponse.self)
    }

    // MARK: Rooms and zones

    /// Adds a room. Fails with a name code (3, 46, 36, 35, 60), 31 (a similar name in the home) or 49.
    public func addRoom(named name: String) async throws(HomeClientError) -> Room {
        var request = Home_V1_AddRoomRequest()
        request.homeID = id.data
        request.name = name
        return try await mutate("AddRoom", request, Home_V1_AddRoomResponse.self).room
    }

    /// Removes a room: its accessories move to the room for the entire home, and it leaves every
    /// zone. The room for the entire home cannot be removed (29).
    public func removeRoom(_ room: UUID) async throws(HomeClientError) {
        var request = Home_V1_RemoveRoomRequest()
        request.homeID = id.data
        request.roomID = room.data
        _ = try await mutate("RemoveRoom", request, Home_V1_RemoveRoomResponse.self)
    }

    /// Renames a room. Fails with a name code, 33 (its name already), 31, or 29 for the room for the
    /// entire home.
    @discardableResult
    public func renameRoom(_ room: UUID, to name: String) async throws(HomeClientError) -> Room {
        var request = Home_V1_RenameRoomRequest()
        request.homeID = id.data
        request.roomID = room.data
        request.name = name
        return try await mutate("RenameRoom", request, Home_V1_RenameRoomResponse.self).room
    }

    /// Adds a zone, with no rooms. Fails with a name code, 31 or 49.
    public func addZone(named name: String) async throws(HomeClientError) -> Zone {
        var request = Home_V1_AddZoneRequest()
        request.homeID = id.data
        request.name = name
        return try await mutate("AddZone", request, Home_V1_AddZoneResponse.self).zone
    }

    /// Removes a zone; its rooms stay.
    public func removeZone(_ zone: UUID) async throws(HomeClientError) {
        var request = Home_V1_RemoveZoneRequest()
        request.homeID = id.data
        request.zoneID = zone.data
        _ = try await mutate("RemoveZone", request, Home_V1_RemoveZoneResponse.self)
    }

    /// Renames a zone. Fails with a name code, 33 or 31.
    @discardableResult
    public func renameZone(_ zone: UUID, to name: String) async throws(HomeClientError) -> Zone {
        var request = Home_V1_RenameZoneRequest()
        request.homeID = id.data
        request.zoneID = zone.data
        request.name = name
        return try await mutate("RenameZone", request, Home_V1_RenameZoneResponse.self).zone
    }

    /// Puts a room in a zone (a room may be in many). Fails with 1 if it is there already, 24 for
    /// the room for the entire home.
    @discardableResult
    public func addRoom(_ room: UUID, toZone zone: UUID) async throws(HomeClientError) -> Zone {
        var request = Home_V1_AddRoomToZoneRequest()
        request.homeID = id.data
        request.zoneID = zone.data
        request.roomID = room.data
        return try await mutate("AddRoomToZone", request, Home_V1_AddRoomToZoneResponse.self).zone
    }

    /// Takes a room out of a zone. Fails with 2 if it is not in it.
    @discardableResult
    public func removeRoom(_ room: UUID, fromZone zone: UUID) async throws(HomeClientError) -> Zone {
        var request = Home_V1_RemoveRoomFromZoneRequest()
        request.homeID = id.data
        request.zoneID = zone.data
        request.roomID = room.data
        return try await mutate("RemoveRoomFromZone", request, Home_V1_RemoveRoomFromZoneResponse.self).zone
    }

    // MARK: Accessories and services

    /// Pairs an accessory the browser found (``HomeClient/browseAccessories()``) with the setup
    /// code its user sees, and adds it (a bridge adds everything behind it).
    /// - Returns: the accessories added, the bridge first.
    public func addAccessory(_ accessory: UUID, setupCode: String) async throws(HomeClientError) -> [Accessory] {
        var request = Home_V1_AddAccessoryRequest()
        request.homeID = id.data
        request.accessoryID = accessory.data
        request.setupCode = setupCode
        return try await mutate("AddAccessory", request, Home_V1_AddAccessoryResponse.self).accessories
    }

    /// Removes an accessory and its pairing (a bridge takes those behind it along; removing one
    /// behind a bridge fails with 34).
    public func removeAccessory(_ accessory: UUID) async throws(HomeClientError) {
        var request = Home_V1_RemoveAccessoryRequest()
        request.homeID = id.data
        request.accessoryID = accessory.data
        _ = try await mutate("RemoveAccessory", request, Home_V1_RemoveAccessoryResponse.self)
    }

    /// Renames an accessory, on the server only (the device keeps its own name). Fails with a name
    /// code, 33 or 31.
    @discardableResult
    public func renameAccessory(_ accessory: UUID, to name: String) async throws(HomeClientError) -> Accessory {
        var request = Home_V1_RenameAccessoryRequest()
        request.homeID = id.data
        request.accessoryID = accessory.data
        request.name = name
        return try await mutate("RenameAccessory", request, Home_V1_RenameAccessoryResponse.self).accessory
    }

    /// Moves an accessory to a room (a bridge moves alone, not those behind it).
    @discardableResult
    public func assignAccessory(_ accessory: UUID, toRoom room: UUID) async throws(HomeClientError) -> Accessory {
        var request = Home_V1_AssignAccessoryToRoomRequest()
        request.homeID = id.data
        request.accessoryID = accessory.data
        request.roomID = room.data
        return try await mutate("AssignAccessoryToRoom", request, Home_V1_AssignAccessoryToRoomResponse.self).accessory
    }

    /// Asks the accessory to identify itself; answers when it did. Fails with 4 (88 behind a bridge)
    /// when it is not connected, 61 when blocked, 8 when it does not answer in time, 48 when it
    /// cannot identify, or with the code for its own refusal.
    public func identifyAccessory(_ accessory: UUID) async throws(HomeClientError) {
        var request = Home_V1_IdentifyAccessoryRequest()
        request.homeID = id.data
        request.accessoryID = accessory.data
        _ = try await call("IdentifyAccessory", request, Home_V1_IdentifyAccessoryResponse.self)
    }

    /// Unblocks a bridge that attached serving other accessories than it was paired with. Fails
    /// with 81 for an accessory that is not a bridge.
    @discardableResult
    public func unblockAccessory(_ accessory: UUID) async throws(HomeClientError) -> Accessory {
        var request = Home_V1_UnblockAccessoryRequest()
        request.homeID = id.data
        request.accessoryID = accessory.data
        return try await mutate("UnblockAccessory", request, Home_V1_UnblockAccessoryResponse.self).accessory
    }

    /// Renames a service (names are unique in the home). Fails with a name code, 33 or 31.
    @discardableResult
    public func renameService(_ service: UUID, to name: String) async throws(HomeClientError) -> Service {
        var request = Home_V1_RenameServiceRequest()
        request.homeID = id.data
        request.serviceID = service.data
        request.name = name
        return try await mutate("RenameService", request, Home_V1_RenameServiceResponse.self).service
    }

    /// Sets (or with `nil` clears) what a generic Outlet, Switch or Contact Sensor controls.
    @discardableResult
    public func updateAssociatedServiceType(_ service: UUID, to type: String?) async throws(HomeClientError) -> Service
    {
        var request = Home_V1_UpdateAssociatedServiceTypeRequest()
        request.homeID = id.data
        request.serviceID = service.data
        request.associatedType = type ?? ""
        return try await mutate(
            "UpdateAssociatedServiceType",
            request,
            Home_V1_UpdateAssociatedServiceTypeResponse.self
        )
        .service
    }

    /// HomeKit's servicesWithTypes.
    public func services(ofTypes types: [String]) async throws(HomeClientError) -> [Service] {
        var request = Home_V1_ListServicesWithTypesRequest()
        request.homeID = id.data
        request.types = types
        return try await call("ListServicesWithTypes", request, Home_V1_ListServicesWithTypesResponse.self).services
    }

    // MARK: Characteristics

    /// The cached value, its time and whether the accessory is reachable (an unreachable
    /// accessory's last value is still answered); with `fresh`, the accessory is asked first and its
    /// answer cached. Fails with 6 for a write-only characteristic, 61; with `fresh` also 4 / 88, 8
    /// or 50.
    public func readCharacteristic(
        _ characteristic: UUID,
        fresh: Bool = false
    ) async throws(HomeClientError)
        -> Home_V1_ReadCharacteristicResponse
    {
        var request = Home_V1_ReadCharacteristicRequest()
        request.homeID = id.data
        request.characteristicID = characteristic.data
        request.fresh = fresh
        return try await call("ReadCharacteristic", request, Home_V1_ReadCharacteristicResponse.self)
    }

    /// Writes a value: the accessory gets it first, and the call answers once the accessory accepted
    /// it and the new value is durable. Fails with 5 (read-only), 61, 4 / 88, a value code, 8, or the
    /// code for the accessory's refusal.
    /// - Returns: the value's time (ms since the epoch).
    @discardableResult
    public func writeCharacteristic(
        _ characteristic: UUID,
        _ value: CharacteristicValue
    ) async throws(HomeClientError)
        -> Int64
    {
        var request = Home_V1_WriteCharacteristicRequest()
        request.homeID = id.data
        request.characteristicID = characteristic.data
        request.value = value
        return try await mutate("WriteCharacteristic", request, Home_V1_WriteCharacteristicResponse.self).valueTimeMs
    }

    /// Turns value-change events for this characteristic on (or off) for the caller's account.
    /// Not persisted: it resets when the accessory becomes unreachable. Fails with 7 for a
    /// characteristic without event support, 61, or 4 / 88.
    public func enableNotification(_ characteristic: UUID, _ enable: Bool = true) async throws(HomeClientError) {
        var request = Home_V1_EnableNotificationRequest()
        request.homeID = id.data
        request.characteristicID = characteristic.data
        request.enable = enable
        _ = try await call("EnableNotification", request, Home_V1_EnableNotificationResponse.self)
    }

    /// The characteristic with its properties and metadata.
    public func characteristicMetadata(_ characteristic: UUID) async throws(HomeClientError) -> Characteristic {
        var request = Home_V1_ReadCharacteristicMetadataRequest()
        request.homeID = id.data
        request.characteristicID = characteristic.data
        return try await call("ReadCharacteristicMetadata", request, Home_V1_ReadCharacteristicMetadataResponse.self)
            .characteristic
    }

    // MARK: Service groups

    /// Adds a service group, with no services. Fails with a name code, 31 or 49.
    public func addServiceGroup(named name: String) async throws(HomeClientError) -> ServiceGroup {
        var request = Home_V1_AddServiceGroupRequest()
        request.homeID = id.data
        request.name = name
        return try await mutate("AddServiceGroup", request, Home_V1_AddServiceGroupResponse.self).serviceGroup
    }

    /// Removes a service group; its services stay.
    public func removeServiceGroup(_ group: UUID) async throws(HomeClientError) {
        var request = Home_V1_RemoveServiceGroupRequest()
        request.homeID = id.data
        request.serviceGroupID = group.data
        _ = try await mutate("RemoveServiceGroup", request, Home_V1_RemoveServiceGroupResponse.self)
    }

    /// Renames a service group. Fails with a name code, 33 or 31.
    @discardableResult
    public func renameServiceGroup(_ group: UUID, to name: String) async throws(HomeClientError) -> ServiceGroup {
        var request = Home_V1_RenameServiceGroupRequest()
        request.homeID = id.data
        request.serviceGroupID = group.data
        request.name = name
        return try await mutate("RenameServiceGroup", request, Home_V1_RenameServiceGroupResponse.self).serviceGroup
    }

    /// Puts a service in a group (a service may be in many). Fails with 1 if it is there already.
    @discardableResult
    public func addService(_ service: UUID, toGroup group: UUID) async throws(HomeClientError) -> ServiceGroup {
        var request = Home_V1_AddServiceToGroupRequest()
        request.homeID = id.data
        request.serviceGroupID = group.data
        request.serviceID = service.data
        return try await mutate("AddServiceToGroup", request, Home_V1_AddServiceToGroupResponse.self).serviceGroup
    }

    /// Takes a service out of a group. Fails with 2 if it is not in it.
    @discardableResult
    public func removeService(_ service: UUID, fromGroup group: UUID) async throws(HomeClientError) -> ServiceGroup {
        var request = Home_V1_RemoveServiceFromGroupRequest()
        request.homeID = id.data
        request.serviceGroupID = group.data
        request.serviceID = service.data
        return try await mutate("RemoveServiceFromGroup", request, Home_V1_RemoveServiceFromGroupResponse.self)
            .serviceGroup
    }

    // MARK: Action sets

    /// Adds a user-defined action set, with no actions. Fails with a name code, 31 or 49.
    public func addActionSet(named name: String) async throws(HomeClientError) -> ActionSet {
        var request = Home_V1_AddActionSetRequest()
        request.homeID = id.data
        request.name = name
        return try await mutate("AddActionSet", request, Home_V1_AddActionSetResponse.self).actionSet
    }

    /// Removes an action set (it leaves every trigger). The four built-in ones cannot be removed
    /// (83).
    public func removeActionSet(_ actionSet: UUID) async throws(HomeClientError) {
        var request = Home_V1_RemoveActionSetRequest()
        request.homeID = id.data
        request.actionSetID = actionSet.data
        _ = try await mutate("RemoveActionSet", request, Home_V1_RemoveActionSetResponse.self)
    }

    /// Renames an action set. Fails with a name code, 33 or 31.
    @discardableResult
    public func renameActionSet(_ actionSet: UUID, to name: String) async throws(HomeClientError) -> ActionSet {
        var request = Home_V1_RenameActionSetRequest()
        request.homeID = id.data
        request.actionSetID = actionSet.data
        request.name = name
        return try await mutate("RenameActionSet", request, Home_V1_RenameActionSetResponse.self).actionSet
    }

    /// Adds "write `value` to `characteristic`" to the set.
    @discardableResult
    public func addAction(
        writing value: CharacteristicValue,
        to characteristic: UUID,
        in actionSet: UUID,
        actionID: UUID = .random()
    ) async throws(HomeClientError) -> ActionSet {
        var request = Home_V1_AddActionRequest()
        request.homeID = id.data
        request.actionSetID = actionSet.data
        request.action.id = actionID.data
        request.action.characteristicID = characteristic.data
        request.action.targetValue = value
        return try await mutate("AddAction", request, Home_V1_AddActionResponse.self).actionSet
    }

    /// Removes an action from its set (an enabled trigger left with an empty set is disabled).
    @discardableResult
    public func removeAction(_ action: UUID, from actionSet: UUID) async throws(HomeClientError) -> ActionSet {
        var request = Home_V1_RemoveActionRequest()
        request.homeID = id.data
        request.actionSetID = actionSet.data
        request.actionID = action.data
        return try await mutate("RemoveAction", request, Home_V1_RemoveActionResponse.self).actionSet
    }

    /// Changes the value an action writes. Fails with 2 for an action not in the set, or a value
    /// code (43, 44, 45, 46, 51, 3).
    @discardableResult
    public func updateTargetValue(
        of action: UUID,
        in actionSet: UUID,
        to value: CharacteristicValue
    ) async throws(HomeClientError) -> ActionSet {
        var request = Home_V1_UpdateActionTargetValueRequest()
        request.homeID = id.data
        request.actionSetID = actionSet.data
        request.actionID = action.data
        request.targetValue = value
        return try await mutate("UpdateActionTargetValue", request, Home_V1_UpdateActionTargetValueResponse.self)
            .actionSet
    }

    /// Runs every action; per-action failures are in the error's `itemResults` (63 or 64).
    public func executeActionSet(_ actionSet: UUID) async throws(HomeClientError) {
        var request = Home_V1_ExecuteActionSetRequest()
        request.homeID = id.data
        request.actionSetID = actionSet.data
        _ = try await call("ExecuteActionSet", request, Home_V1_ExecuteActionSetResponse.self)
    }

    // MARK: Timer triggers

    /// Adds a disabled trigger firing at `fireDate` (on a whole minute), repeating by `recurrence`.
    public func addTrigger(
        named name: String,
        fireDate: Date,
        recurrence: Recurrence? = nil
    ) async throws(HomeClientError) -> TimerTrigger {
        var request = Home_V1_AddTriggerRequest()
        request.homeID = id.data
        request.name = name
        request.fireDateMs = Int64((fireDate.timeIntervalSince1970 * 1000).rounded())
        if let recurrence { request.recurrence = recurrence }
        return try await mutate("AddTrigger", request, Home_V1_AddTriggerResponse.self).trigger
    }

    /// Removes a timer trigger.
    public func removeTrigger(_ trigger: UUID) async throws(HomeClientError) {
        var request = Home_V1_RemoveTriggerRequest()
        request.homeID = id.data
        request.triggerID = trigger.data
        _ = try await mutate("RemoveTrigger", request, Home_V1_RemoveTriggerResponse.self)
    }

    /// Renames a timer trigger. Fails with a name code, 33 or 31.
    @discardableResult
    public func renameTrigger(_ trigger: UUID, to name: String) async throws(HomeClientError) -> TimerTrigger {
        var request = Home_V1_RenameTriggerRequest()
        request.homeID = id.data
        request.triggerID = trigger.data
        request.name = name
        return try await mutate("RenameTrigger", request, Home_V1_RenameTriggerResponse.self).trigger
    }

    /// Enables (or disables) a trigger. Enabling needs an action set (26), each with an action
    /// (25), a fire date not past for a one-shot trigger (28) and a next fire within 5 weeks (71).
    @discardableResult
    public func enableTrigger(_ trigger: UUID, _ enable: Bool = true) async throws(HomeClientError) -> TimerTrigger {
        var request = Home_V1_EnableTriggerRequest()
        request.homeID = id.data
        request.triggerID = trigger.data
        request.enable = enable
        return try await mutate("EnableTrigger", request, Home_V1_EnableTriggerResponse.self).trigger
    }

    /// Moves a trigger's fire date, which must be on a whole minute (70), for a one-shot trigger in
    /// the future (28), and for an enabled one fire within 5 weeks (71).
    @discardableResult
    public func updateFireDate(of trigger: UUID, to fireDate: Date) async throws(HomeClientError) -> TimerTrigger {
        var request = Home_V1_UpdateTriggerFireDateRequest()
        request.homeID = id.data
        request.triggerID = trigger.data
        request.fireDateMs = Int64((fireDate.timeIntervalSince1970 * 1000).rounded())
        return try await mutate("UpdateTriggerFireDate", request, Home_V1_UpdateTriggerFireDateResponse.self).trigger
    }

    /// Sets the recurrence, or with `nil` makes the trigger one-shot.
    @discardableResult
    public func updateRecurrence(
        of trigger: UUID,
        to recurrence: Recurrence?
    ) async throws(HomeClientError)
        -> TimerTrigger
    {
        var request = Home_V1_UpdateTriggerRecurrenceRequest()
        request.homeID = id.data
        request.triggerID = trigger.data
        if let recurrence { request.recurrence = recurrence }
        return try await mutate("UpdateTriggerRecurrence", request, Home_V1_UpdateTriggerRecurrenceResponse.self)
            .trigger
    }

    /// Has the trigger run an action set too. Fails with 1 if it does already.
    @discardableResult
    public func addActionSet(_ actionSet: UUID, toTrigger trigger: UUID) async throws(HomeClientError) -> TimerTrigger {
        var request = Home_V1_AddActionSetToTriggerRequest()
        request.homeID = id.data
        request.triggerID = trigger.data
        request.actionSetID = actionSet.data
        return try await mutate("AddActionSetToTrigger", request, Home_V1_AddActionSetToTriggerResponse.self).trigger
    }

    /// Stops the trigger running an action set (the trigger is disabled if it can no longer run).
    @discardableResult
    public func removeActionSet(
        _ actionSet: UUID,
        fromTrigger trigger: UUID
    ) async throws(HomeClientError)
        -> TimerTrigger
    {
        var request = Home_V1_RemoveActionSetFromTriggerRequest()
        request.homeID = id.data
        request.triggerID = trigger.data
        request.actionSetID = actionSet.data
        return try await mutate("RemoveActionSetFromTrigger", request, Home_V1_RemoveActionSetFromTriggerResponse.self)
            .trigger
    }

    // MARK: Users

    /// The home's members: their user ids in this home (never their accounts'), names, whether
    /// administrator, and which is the owner.
    public func listUsers() async throws(HomeClientError) -> [User] {
        var request = Home_V1_ListUsersRequest()
        request.homeID = id.data
        return try await call("ListUsers", request, Home_V1_ListUsersResponse.self).users
    }

    /// Adds an existing account as a guest or an administrator. The user it answers with has an id
    /// of its own in this home, which ``removeUser(_:)`` and ``updateUserAccess(_:administrator:)``
    /// take.
    @discardableResult
    public func addUser(_ account: UUID, administrator: Bool = false) async throws(HomeClientError) -> User {
        var request = Home_V1_AddUserRequest()
        request.homeID = id.data
        request.accountID = account.data
        request.administrator = administrator
        return try await mutate("AddUser", request, Home_V1_AddUserResponse.self).user
    }

    /// Removes a member, named by their user id in this home. The owner cannot be removed (48).
    public func removeUser(_ user: UUID) async throws(HomeClientError) {
        var request = Home_V1_RemoveUserRequest()
        request.homeID = id.data
        request.userID = user.data
        _ = try await mutate("RemoveUser", request, Home_V1_RemoveUserResponse.self)
    }

    /// Makes a member (by their user id in this home) an administrator or a guest. The owner's
    /// access cannot change (48).
    @discardableResult
    public func updateUserAccess(_ user: UUID, administrator: Bool) async throws(HomeClientError) -> User {
        var request = Home_V1_UpdateUserAccessRequest()
        request.homeID = id.data
        request.userID = user.data
        request.administrator = administrator
        return try await mutate("UpdateUserAccess", request, Home_V1_UpdateUserAccessResponse.self).user
    }
}
