import HomeProto
public import SwiftProtobuf

/// Every method with its request and response message types, for generic callers (`rpc-client
/// call`, tools that take JSON).
public enum MethodTypes {
    /// One method's name and message types.
    public struct Entry: Sendable {
        /// The full name, e.g. `home.v1.HomeService/AddRoom`.
        public let name: String
        /// The request message's type.
        public let request: any SwiftProtobuf.Message.Type
        /// The response message's type (of each message, for a stream).
        public let response: any SwiftProtobuf.Message.Type
        /// Whether the server answers with a stream of `response` messages.
        public var isStreaming = false
    }

    private static func entry(
        _ service: String,
        _ method: String,
        _ request: any SwiftProtobuf.Message.Type,
        _ response: any SwiftProtobuf.Message.Type
    ) -> Entry {
        Entry(name: "home.v1.\(service)/\(method)", request: request, response: response)
    }

    /// In the order docs/API.md lists them.
    public static let all: [Entry] = [
        entry("HomeService", "ListHomes", Home_V1_ListHomesRequest.self, Home_V1_ListHomesResponse.self),
        entry("HomeService", "GetHome", Home_V1_GetHomeRequest.self, Home_V1_GetHomeResponse.self),
        entry("HomeService", "AddHome", Home_V1_AddHomeRequest.self, Home_V1_AddHomeResponse.self),
        entry("HomeService", "RemoveHome", Home_V1_RemoveHomeRequest.self, Home_V1_RemoveHomeResponse.self),
        entry("HomeService", "RenameHome", Home_V1_RenameHomeRequest.self, Home_V1_RenameHomeResponse.self),
        entry("HomeService", "SetPrimaryHome", Home_V1_SetPrimaryHomeRequest.self, Home_V1_SetPrimaryHomeResponse.self),
        entry(
            "HomeService",
            "SetHomeTimeZone",
            Home_V1_SetHomeTimeZoneRequest.self,
            Home_V1_SetHomeTimeZoneResponse.self
        ),
        entry("HomeService", "AddRoom", Home_V1_AddRoomRequest.self, Home_V1_AddRoomResponse.self),
        entry("HomeService", "RemoveRoom", Home_V1_RemoveRoomRequest.self, Home_V1_RemoveRoomResponse.self),
        entry("HomeService", "RenameRoom", Home_V1_RenameRoomRequest.self, Home_V1_RenameRoomResponse.self),
        entry("HomeService", "AddZone", Home_V1_AddZoneRequest.self, Home_V1_AddZoneResponse.self),
        entry("HomeService", "RemoveZone", Home_V1_RemoveZoneRequest.self, Home_V1_RemoveZoneResponse.self),
        entry("HomeService", "RenameZone", Home_V1_RenameZoneRequest.self, Home_V1_RenameZoneResponse.self),
        entry("HomeService", "AddRoomToZone", Home_V1_AddRoomToZoneRequest.self, Home_V1_AddRoomToZoneResponse.self),
        entry(
            "HomeService",
            "RemoveRoomFromZone",
            Home_V1_RemoveRoomFromZoneRequest.self,
            Home_V1_RemoveRoomFromZoneResponse.self
        ),
        entry("HomeService", "AddAccessory", Home_V1_AddAccessoryRequest.self, Home_V1_AddAccessoryResponse.self),
        entry(
            "HomeService",
            "RemoveAccessory",
            Home_V1_RemoveAccessoryRequest.self,
            Home_V1_RemoveAccessoryResponse.self
        ),
        entry(
            "HomeService",
            "RenameAccessory",
            Home_V1_RenameAccessoryRequest.self,
            Home_V1_RenameAccessoryResponse.self
        ),
        entry(
            "HomeService",
            "AssignAccessoryToRoom",
            Home_V1_AssignAccessoryToRoomRequest.self,
            Home_V1_AssignAccessoryToRoomResponse.self
        ),
        entry(
            "HomeService",
            "IdentifyAccessory",
            Home_V1_IdentifyAccessoryRequest.self,
            Home_V1_IdentifyAccessoryResponse.self
        ),
        entry(
            "HomeService",
            "UnblockAccessory",
            Home_V1_UnblockAccessoryRequest.self,
            Home_V1_UnblockAccessoryResponse.self
        ),
        entry("HomeService", "RenameService", Home_V1_RenameServiceRequest.self, Home_V1_RenameServiceResponse.self),
        entry(
            "HomeService",
            "UpdateAssociatedServiceType",
            Home_V1_UpdateAssociatedServiceTypeRequest.self,
            Home_V1_UpdateAssociatedServiceTypeResponse.self
        ),
        entry(
            "HomeService",
            "ListServicesWithTypes",
            Home_V1_ListServicesWithTypesRequest.self,
            Home_V1_ListServicesWithTypesResponse.self
        ),
        entry(
            "HomeService",
            "ReadCharacteristic",
            Home_V1_ReadCharacteristicRequest.self,
            Home_V1_ReadCharacteristicResponse.self
        ),
        entry(
            "HomeService",
            "WriteCharacteristic",
            Home_V1_WriteCharacteristicRequest.self,
            Home_V1_WriteCharacteristicResponse.self
        ),
        entry(
            "HomeService",
            "EnableNotification",
            Home_V1_EnableNotificationRequest.self,
            Home_V1_EnableNotificationResponse.self
        ),
        entry(
            "HomeService",
            "ReadCharacteristicMetadata",
            Home_V1_ReadCharacteristicMetadataRequest.self,
            Home_V1_ReadCharacteristicMetadataResponse.self
        ),
        entry(
            "HomeService",
            "AddServiceGroup",
            Home_V1_AddServiceGroupRequest.self,
            Home_V1_AddServiceGroupResponse.self
        ),
        entry(
            "HomeService",
            "RemoveServiceGroup",
            Home_V1_RemoveServiceGroupRequest.self,
            Home_V1_RemoveServiceGroupResponse.self
        ),
        entry(
            "HomeService",
            "RenameServiceGroup",
            Home_V1_RenameServiceGroupRequest.self,
            Home_V1_RenameServiceGroupResponse.self
        ),
        entry(
            "HomeService",
            "AddServiceToGroup",
            Home_V1_AddServiceToGroupRequest.self,
            Home_V1_AddServiceToGroupResponse.self
        ),
        entry(
            "HomeService",
            "RemoveServiceFromGroup",
            Home_V1_RemoveServiceFromGroupRequest.self,
            Home_V1_RemoveServiceFromGroupResponse.self
        ),
        entry("HomeService", "AddActionSet", Home_V1_AddActionSetRequest.self, Home_V1_AddActionSetResponse.self),
        entry(
            "HomeService",
            "RemoveActionSet",
            Home_V1_RemoveActionSetRequest.self,
            Home_V1_RemoveActionSetResponse.self
        ),
        entry(
            "HomeService",
            "RenameActionSet",
            Home_V1_RenameActionSetRequest.self,
            Home_V1_RenameActionSetResponse.self
        ),
        entry("HomeService", "AddAction", Home_V1_AddActionRequest.self, Home_V1_AddActionResponse.self),
        entry("HomeService", "RemoveAction", Home_V1_RemoveActionRequest.self, Home_V1_RemoveActionResponse.self),
        entry(
            "HomeService",
            "UpdateActionTargetValue",
            Home_V1_UpdateActionTargetValueRequest.self,
            Home_V1_UpdateActionTargetValueResponse.self
        ),
        entry(
            "HomeService",
            "ExecuteActionSet",
            Home_V1_ExecuteActionSetRequest.self,
            Home_V1_ExecuteActionSetResponse.self
        ),
        entry("HomeService", "AddTrigger", Home_V1_AddTriggerRequest.self, Home_V1_AddTriggerResponse.self),
        entry("HomeService", "RemoveTrigger", Home_V1_RemoveTriggerRequest.self, Home_V1_RemoveTriggerResponse.self),
        entry("HomeService", "RenameTrigger", Home_V1_RenameTriggerRequest.self, Home_V1_RenameTriggerResponse.self),
        entry("HomeService", "EnableTrigger", Home_V1_EnableTriggerRequest.self, Home_V1_EnableTriggerResponse.self),
        entry(
            "HomeService",
            "UpdateTriggerFireDate",
            Home_V1_UpdateTriggerFireDateRequest.self,
            Home_V1_UpdateTriggerFireDateResponse.self
        ),
        entry(
            "HomeService",
            "UpdateTriggerRecurrence",
            Home_V1_UpdateTriggerRecurrenceRequest.self,
            Home_V1_UpdateTriggerRecurrenceResponse.self
        ),
        entry(
            "HomeService",
            "AddActionSetToTrigger",
            Home_V1_AddActionSetToTriggerRequest.self,
            Home_V1_AddActionSetToTriggerResponse.self
        ),
        entry(
            "HomeService",
            "RemoveActionSetFromTrigger",
            Home_V1_RemoveActionSetFromTriggerRequest.self,
            Home_V1_RemoveActionSetFromTriggerResponse.self
        ),
        entry("HomeService", "ListUsers", Home_V1_ListUsersRequest.self, Home_V1_ListUsersResponse.self),
        entry("HomeService", "AddUser", Home_V1_AddUserRequest.self, Home_V1_AddUserResponse.self),
        entry("HomeService", "RemoveUser", Home_V1_RemoveUserRequest.self, Home_V1_RemoveUserResponse.self),
        entry(
            "HomeService",
            "UpdateUserAccess",
            Home_V1_UpdateUserAccessRequest.self,
            Home_V1_UpdateUserAccessResponse.self
        ),
        Entry(
            name: "home.v1.HomeService/Subscribe",
            request: Home_V1_SubscribeRequest.self,
            response: Home_V1_Event.self,
            isStreaming: true
        ),
        Entry(
            name: "home.v1.HomeService/BrowseAccessories",
            request: Home_V1_BrowseAccessoriesRequest.self,
            response: Home_V1_BrowseEvent.self,
            isStreaming: true
        ),
        entry("AccountService", "WhoAmI", Home_V1_WhoAmIRequest.self, Home_V1_WhoAmIResponse.self),
        entry("AccountService", "CreateAccount", Home_V1_CreateAccountRequest.self, Home_V1_CreateAccountResponse.self),
        entry("AccountService", "ListAccounts", Home_V1_ListAccountsRequest.self, Home_V1_ListAccountsResponse.self),
        entry("AccountService", "IssueToken", Home_V1_IssueTokenRequest.self, Home_V1_IssueTokenResponse.self),
        entry("AccountService", "RevokeToken", Home_V1_RevokeTokenRequest.self, Home_V1_RevokeTokenResponse.self),
        entry("AccountService", "ListTokens", Home_V1_ListTokensRequest.self, Home_V1_ListTokensResponse.self),
        entry("AdminService", "BackupStore", Home_V1_BackupStoreRequest.self, Home_V1_BackupStoreResponse.self),
        Entry(
            name: "home.v1.AccessoryLink/Advertise",
            request: Home_V1_AdvertiseRequest.self,
            response: Home_V1_LinkMessage.self,
            isStreaming: true
        ),
        Entry(
            name: "home.v1.AccessoryLink/Attach",
            request: Home_V1_AttachRequest.self,
            response: Home_V1_LinkMessage.self,
            isStreaming: true
        ),
        entry("AccessoryLink", "AnswerCommand", Home_V1_AnswerCommandRequest.self, Home_V1_AnswerCommandResponse.self),
        entry("AccessoryLink", "ReportValues", Home_V1_ReportValuesRequest.self, Home_V1_ReportValuesResponse.self),
        entry(
            "AccessoryLink",
            "ReportFirmwareVersion",
            Home_V1_ReportFirmwareVersionRequest.self,
            Home_V1_ReportFirmwareVersionResponse.self
        ),
        entry("Health", "Check", Home_V1_HealthCheckRequest.self, Home_V1_HealthCheckResponse.self),
        entry("ServerInfo", "Get", Home_V1_ServerInfoRequest.self, Home_V1_ServerInfoResponse.self),
    ]

    /// The entry for a full method name.
    public static func named(_ name: String) -> Entry? {
        all.first { $0.name == name }
    }
}
