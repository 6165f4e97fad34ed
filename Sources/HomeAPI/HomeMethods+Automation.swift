import Foundation
import HomeProto
import HomeService
import RPCServer

/// Service groups, action sets, triggers and users.
extension HomeMethods {
    static let groups: [APIMethod] = [
        .mutation(
            service + "AddServiceGroup",
            Home_V1_AddServiceGroupRequest.self,
            Home_V1_AddServiceGroupResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let group = try attempt(field: "name") { () throws(HomeServiceError) in
                try api.store.addServiceGroup(named: request.name, to: home, as: caller.account)
            }
            var response = Home_V1_AddServiceGroupResponse()
            response.serviceGroup = ProtoEncoding.serviceGroup(group)
            return response
        },
        .mutation(
            service + "RemoveServiceGroup",
            Home_V1_RemoveServiceGroupRequest.self,
            Home_V1_RemoveServiceGroupResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let group: ServiceGroupID = try api.object(request.serviceGroupID, "service_group_id", in: home, caller)
            try attempt(object: group.raw) { () throws(HomeServiceError) in
                try api.store.removeServiceGroup(group, as: caller.account)
            }
            return Home_V1_RemoveServiceGroupResponse()
        },
        .mutation(
            service + "RenameServiceGroup",
            Home_V1_RenameServiceGroupRequest.self,
            Home_V1_RenameServiceGroupResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let group: ServiceGroupID = try api.object(request.serviceGroupID, "service_group_id", in: home, caller)
            try attempt(object: group.raw, field: "name") { () throws(HomeServiceError) in
                try api.store.renameServiceGroup(group, to: request.name, as: caller.account)
            }
            var response = Home_V1_RenameServiceGroupResponse()
            response.serviceGroup = try api.serviceGroupMessage(group, caller)
            return response
        },
        .mutation(
            service + "AddServiceToGroup",
            Home_V1_AddServiceToGroupRequest.self,
            Home_V1_AddServiceToGroupResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let group: ServiceGroupID = try api.object(request.serviceGroupID, "service_group_id", in: home, caller)
            let serviceID: ServiceID = try api.object(request.serviceID, "service_id", in: home, caller)
            try attempt(object: serviceID.raw, field: "service_id") { () throws(HomeServiceError) in
                try api.store.addService(serviceID, toGroup: group, as: caller.account)
            }
            var response = Home_V1_AddServiceToGroupResponse()
            response.serviceGroup = try api.serviceGroupMessage(group, caller)
            return response
        },
        .mutation(
            service + "RemoveServiceFromGroup",
            Home_V1_RemoveServiceFromGroupRequest.self,
            Home_V1_RemoveServiceFromGroupResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let group: ServiceGroupID = try api.object(request.serviceGroupID, "service_group_id", in: home, caller)
            let serviceID: ServiceID = try ProtoDecoding.id(request.serviceID, "service_id")
            try attempt(object: serviceID.raw, field: "service_id") { () throws(HomeServiceError) in
                try api.store.removeService(serviceID, fromGroup: group, as: caller.account)
            }
            var response = Home_V1_RemoveServiceFromGroupResponse()
            response.serviceGroup = try api.serviceGroupMessage(group, caller)
            return response
        },
    ]

    static let actionSets: [APIMethod] = [
        .mutation(
            service + "AddActionSet",
            Home_V1_AddActionSetRequest.self,
            Home_V1_AddActionSetResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let actionSet = try attempt(field: "name") { () throws(HomeServiceError) in
                try api.store.addActionSet(named: request.name, to: home, as: caller.account)
            }
            var response = Home_V1_AddActionSetResponse()
            response.actionSet = ProtoEncoding.actionSet(actionSet)
            return response
        },
        .mutation(
            service + "RemoveActionSet",
            Home_V1_RemoveActionSetRequest.self,
            Home_V1_RemoveActionSetResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: ActionSetID = try api.object(request.actionSetID, "action_set_id", in: home, caller)
            try attempt(object: id.raw) { () throws(HomeServiceError) in
                try api.store.removeActionSet(id, as: caller.account)
            }
            return Home_V1_RemoveActionSetResponse()
        },
        .encodedMutation(
            service + "RenameActionSet",
            Home_V1_RenameActionSetRequest.self,
            Home_V1_RenameActionSetResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: ActionSetID = try api.object(request.actionSetID, "action_set_id", in: home, caller)
            try attempt(object: id.raw, field: "name") { () throws(HomeServiceError) in
                try api.store.renameActionSet(id, to: request.name, as: caller.account)
            }
            return try api.actionSetAnswer(id, caller)
        },
        .encodedMutation(
            service + "AddAction",
            Home_V1_AddActionRequest.self,
            Home_V1_AddActionResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: ActionSetID = try api.object(request.actionSetID, "action_set_id", in: home, caller)
            let characteristic: CharacteristicID = try api.object(
                request.action.characteristicID,
                "action.characteristic_id",
                in: home,
                caller
            )
            let action = CharacteristicWriteAction(
                id: try ProtoDecoding.optionalID(request.action.id, "action.id"),
                characteristic: characteristic,
                targetValue: try ProtoDecoding.value(request.action.targetValue, "action.target_value")
            )
            try attempt(object: characteristic.raw, field: "action") { () throws(HomeServiceError) in
                try api.store.addAction(action, to: id, as: caller.account)
            }
            return try api.actionSetAnswer(id, caller)
        },
        .encodedMutation(
            service + "RemoveAction",
            Home_V1_RemoveActionRequest.self,
            Home_V1_RemoveActionResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: ActionSetID = try api.object(request.actionSetID, "action_set_id", in: home, caller)
            let action: ActionID = try ProtoDecoding.id(request.actionID, "action_id")
            try attempt(object: action.raw, field: "action_id") { () throws(HomeServiceError) in
                try api.store.removeAction(action, from: id, as: caller.account)
            }
            return try api.actionSetAnswer(id, caller)
        },
        .encodedMutation(
            service + "UpdateActionTargetValue",
            Home_V1_UpdateActionTargetValueRequest.self,
            Home_V1_UpdateActionTargetValueResponse.self,
            shortcut: ActionTargetUpdate.shortcut
        ) {
            api,
            request,
            caller throws(APIFailure) in
            try ActionTargetUpdate.apply(api, ActionTargetUpdate(request), caller)
        },
        .forwarded(
            service + "ExecuteActionSet",
            Home_V1_ExecuteActionSetRequest.self,
            Home_V1_ExecuteActionSetResponse.self
        ) {
            api,
            call,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: ActionSetID = try api.object(request.actionSetID, "action_set_id", in: home, caller)
            let plan = try attempt(object: id.raw) { () throws(HomeServiceError) in
                try api.store.planExecution(of: id, as: caller.account)
            }
            api.execute(plan, as: caller.account, session: caller.session, deadline: call.deadline) {
                result,
                ticket in
                api.reply(call, with: Outcome(result.map { Home_V1_ExecuteActionSetResponse() }), after: ticket)
            }
        },
    ]

    static let triggers: [APIMethod] = [
        .mutation(
            service + "AddTrigger",
            Home_V1_AddTriggerRequest.self,
            Home_V1_AddTriggerResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let recurrence =
                request.hasRecurrence ? try ProtoDecoding.recurrence(request.recurrence, "recurrence") : nil
            try attempt(field: "fire_date_ms") { () throws(HomeServiceError) in
                try TriggerRules.checkDate(request.fireDateMs, "fire date")
            }
            let trigger: TimerTrigger
            do throws(HomeServiceError) {
                trigger = try api.store.addTrigger(
                    named: request.name,
                    fireDate: request.fireDateMs,
                    recurrence: recurrence,
                    to: home,
                    as: caller.account
                )
            } catch {
                // Name the field the refused input came in.
                let field: String =
                    switch error.code {
                    case .dateMustBeOnSpecifiedBoundaries, .fireDateInPast: "fire_date_ms"
                    case .recurrenceMustBeOnSpecifiedBoundaries, .recurrenceTooSmall, .recurrenceTooLarge: "recurrence"
                    default: "name"
                    }
                throw APIFailure(error, field: field)
            }
            var response = Home_V1_AddTriggerResponse()
            response.trigger = ProtoEncoding.trigger(trigger)
            return response
        },
        .mutation(
            service + "RemoveTrigger",
            Home_V1_RemoveTriggerRequest.self,
            Home_V1_RemoveTriggerResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: TriggerID = try api.object(request.triggerID, "trigger_id", in: home, caller)
            try attempt(object: id.raw) { () throws(HomeServiceError) in
                try api.store.removeTrigger(id, as: caller.account)
            }
            return Home_V1_RemoveTriggerResponse()
        },
        .mutation(
            service + "RenameTrigger",
            Home_V1_RenameTriggerRequest.self,
            Home_V1_RenameTriggerResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: TriggerID = try api.object(request.triggerID, "trigger_id", in: home, caller)
            try attempt(object: id.raw, field: "name") { () throws(HomeServiceError) in
                try api.store.renameTrigger(id, to: request.name, as: caller.account)
            }
            var response = Home_V1_RenameTriggerResponse()
            response.trigger = try api.triggerMessage(id, caller)
            return response
        },
        .mutation(
            service + "EnableTrigger",
            Home_V1_EnableTriggerRequest.self,
            Home_V1_EnableTriggerResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: TriggerID = try api.object(request.triggerID, "trigger_id", in: home, caller)
            try attempt(object: id.raw, field: "enable") { () throws(HomeServiceError) in
                try api.store.enableTrigger(id, request.enable, as: caller.account)
            }
            var response = Home_V1_EnableTriggerResponse()
            response.trigger = try api.triggerMessage(id, caller)
            return response
        },
        .mutation(
            service + "UpdateTriggerFireDate",
            Home_V1_UpdateTriggerFireDateRequest.self,
            Home_V1_UpdateTriggerFireDateResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: TriggerID = try api.object(request.triggerID, "trigger_id", in: home, caller)
            try attempt(object: id.raw, field: "fire_date_ms") { () throws(HomeServiceError) in
                try api.store.updateFireDate(of: id, to: request.fireDateMs, as: caller.account)
            }
            var response = Home_V1_UpdateTriggerFireDateResponse()
            response.trigger = try api.triggerMessage(id, caller)
            return response
        },
        .mutation(
            service + "UpdateTriggerRecurrence",
            Home_V1_UpdateTriggerRecurrenceRequest.self,
            Home_V1_UpdateTriggerRecurrenceResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: TriggerID = try api.object(request.triggerID, "trigger_id", in: home, caller)
            let recurrence =
                request.hasRecurrence ? try ProtoDecoding.recurrence(request.recurrence, "recurrence") : nil
            try attempt(object: id.raw, field: "recurrence") { () throws(HomeServiceError) in
                try api.store.updateRecurrence(of: id, to: recurrence, as: caller.account)
            }
            var response = Home_V1_UpdateTriggerRecurrenceResponse()
            response.trigger = try api.triggerMessage(id, caller)
            return response
        },
        .mutation(
            service + "AddActionSetToTrigger",
            Home_V1_AddActionSetToTriggerRequest.self,
            Home_V1_AddActionSetToTriggerResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: TriggerID = try api.object(request.triggerID, "trigger_id", in: home, caller)
            let actionSet: ActionSetID = try api.object(request.actionSetID, "action_set_id", in: home, caller)
            try attempt(object: actionSet.raw, field: "action_set_id") { () throws(HomeServiceError) in
                try api.store.addActionSet(actionSet, toTrigger: id, as: caller.account)
            }
            var response = Home_V1_AddActionSetToTriggerResponse()
            response.trigger = try api.triggerMessage(id, caller)
            return response
        },
        .mutation(
            service + "RemoveActionSetFromTrigger",
            Home_V1_RemoveActionSetFromTriggerRequest.self,
            Home_V1_RemoveActionSetFromTriggerResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let id: TriggerID = try api.object(request.triggerID, "trigger_id", in: home, caller)
            let actionSet: ActionSetID = try ProtoDecoding.id(request.actionSetID, "action_set_id")
            try attempt(object: actionSet.raw, field: "action_set_id") { () throws(HomeServiceError) in
                try api.store.removeActionSet(actionSet, fromTrigger: id, as: caller.account)
            }
            var response = Home_V1_RemoveActionSetFromTriggerResponse()
            response.trigger = try api.triggerMessage(id, caller)
            return response
        },
    ]

    static let users: [APIMethod] = [
        .read(service + "ListUsers", Home_V1_ListUsersRequest.self, Home_V1_ListUsersResponse.self) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let users = try attempt(object: home.raw) { () throws(HomeServiceError) in
                try api.store.users(in: home, as: caller.account)
            }
            var response = Home_V1_ListUsersResponse()
            response.users = users.map(ProtoEncoding.user)
            return response
        },
        .mutation(service + "AddUser", Home_V1_AddUserRequest.self, Home_V1_AddUserResponse.self) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let account = try api.accountID(request.accountID)
            try attempt(object: account.raw, field: "account_id") { () throws(HomeServiceError) in
                try api.store.addUser(
                    account,
                    to: home,
                    role: request.administrator ? .administrator : .guest,
                    as: caller.account
                )
            }
            var response = Home_V1_AddUserResponse()
            response.user = try api.userMessage(account, in: home, caller)
            return response
        },
        .mutation(
            service + "RemoveUser",
            Home_V1_RemoveUserRequest.self,
            Home_V1_RemoveUserResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let user: UserID = try ProtoDecoding.id(request.userID, "user_id")
            try attempt(object: user.raw, field: "user_id") { () throws(HomeServiceError) in
                try api.store.removeUser(user, from: home, as: caller.account)
            }
            return Home_V1_RemoveUserResponse()
        },
        .mutation(
            service + "UpdateUserAccess",
            Home_V1_UpdateUserAccessRequest.self,
            Home_V1_UpdateUserAccessResponse.self
        ) {
            api,
            request,
            caller throws(APIFailure) in
            let home = try api.homeID(request.homeID)
            let user: UserID = try ProtoDecoding.id(request.userID, "user_id")
            let account = try attempt(object: user.raw, field: "user_id") { () throws(HomeServiceError) in
                try api.store.updateUserAccess(
                    user,
                    in: home,
                    role: request.administrator ? .administrator : .guest,
                    as: caller.account
                )
            }
            var response = Home_V1_UpdateUserAccessResponse()
            response.user = try api.userMessage(account, in: home, caller)
            return response
        },
    ]
}
