import Foundation
public import HomeProto
public import HomeService

/// Domain values as messages.
enum ProtoEncoding {
    static func data(_ id: UniqueIdentifier) -> Data { Data(id.bytes) }
    static func data<Kind>(_ id: ID<Kind>) -> Data { Data(id.raw.bytes) }

    static func value(_ value: CharacteristicValue) -> Home_V1_CharacteristicValue {
        Home_V1_CharacteristicValue(value)
    }

    static func room(_ room: Room, accessories: [AccessoryID] = []) -> Home_V1_Room {
        var message = Home_V1_Room()
        message.id = data(room.id)
        message.name = room.name
        message.accessoryIds = accessories.map(data)
        return message
    }

    static func zone(_ zone: Zone) -> Home_V1_Zone {
        var message = Home_V1_Zone()
        message.id = data(zone.id)
        message.name = zone.name
        message.roomIds = zone.rooms.map(data)
        return message
    }

    static func format(_ format: CharacteristicFormat) -> Home_V1_CharacteristicFormat {
        switch format {
        case .bool: .bool
        case .uint8: .uint8
        case .uint16: .uint16
        case .uint32: .uint32
        case .uint64: .uint64
        case .int: .int
        case .float: .float
        case .string: .string
        case .tlv8: .tlv8
        case .data: .data
        }
    }

    static func metadata(_ metadata: CharacteristicMetadata) -> Home_V1_CharacteristicMetadata {
        var message = Home_V1_CharacteristicMetadata()
        message.format = format(metadata.format)
        message.units = metadata.units ?? ""
        if let minimum = metadata.minimumValue { message.minimumValue = minimum }
        if let maximum = metadata.maximumValue { message.maximumValue = maximum }
        if let step = metadata.stepValue { message.stepValue = step }
        if let maxLength = metadata.maxLength { message.maxLength = Int32(clamping: maxLength) }
        if let minLength = metadata.minLength { message.minLength = Int32(clamping: minLength) }
        message.validValues = metadata.validValues ?? []
        message.manufacturerDescription = metadata.manufacturerDescription ?? ""
        return message
    }

    static func properties(_ properties: CharacteristicProperties) -> Home_V1_CharacteristicProperties {
        var message = Home_V1_CharacteristicProperties()
        message.readable = properties.contains(.readable)
        message.writable = properties.contains(.writable)
        message.supportsEventNotification = properties.contains(.supportsEventNotification)
        message.hidden = properties.contains(.hidden)
        message.requiresAuthorizationData = properties.contains(.requiresAuthorizationData)
        return message
    }

    static func characteristic(_ state: HomeStore.CharacteristicState) -> Home_V1_Characteristic {
        let characteristic = state.characteristic
        var message = Home_V1_Characteristic()
        message.id = data(characteristic.id)
        message.serviceID = data(characteristic.service)
        message.accessoryID = data(characteristic.accessory)
        message.type = characteristic.type
        message.properties = properties(characteristic.properties)
        message.metadata = metadata(characteristic.metadata)
        if let current = state.entry.value { message.value = value(current) }
        message.valueTimeMs = state.entry.updatedAt
        message.notificationEnabled = state.notificationEnabled
        return message
    }

    /// A service; with `characteristics`, each of them (else only the service's own fields).
    static func service(
        _ service: Service,
        characteristics: (CharacteristicID) -> HomeStore.CharacteristicState?
    ) -> Home_V1_Service {
        var message = Home_V1_Service()
        message.id = data(service.id)
        message.accessoryID = data(service.accessory)
        message.type = service.type
        message.name = service.name
        message.primary = service.isPrimary
        message.userInteractive = service.isUserInteractive
        message.associatedType = service.associatedServiceType ?? ""
        message.linkedServiceIds = service.linkedServices.map(data)
        message.characteristics = service.characteristics.compactMap(characteristics).map(characteristic)
        return message
    }

    static func accessory(
        _ accessory: Accessory,
        services: (ServiceID) -> Service?,
        characteristics: (CharacteristicID) -> HomeStore.CharacteristicState?
    ) -> Home_V1_Accessory {
        var message = Home_V1_Accessory()
        message.id = data(accessory.id)
        message.name = accessory.name
        message.roomID = data(accessory.room)
        message.category = Int32(clamping: accessory.category)
        message.manufacturer = accessory.manufacturer
        message.model = accessory.model
        message.firmwareVersion = accessory.firmwareVersion
        message.reachable = accessory.isReachable
        message.blocked = accessory.isBlocked
        if let bridge = accessory.bridge { message.bridgeID = data(bridge) }
        message.bridged = accessory.isBridged
        message.bridgedAccessoryIds = accessory.bridgedAccessories.map(data)
        message.supportsIdentify = accessory.supportsIdentify
        message.services = accessory.services.compactMap(services).map {
            service($0, characteristics: characteristics)
        }
        return message
    }

    static func serviceGroup(_ group: ServiceGroup) -> Home_V1_ServiceGroup {
        var message = Home_V1_ServiceGroup()
        message.id = data(group.id)
        message.name = group.name
        message.serviceIds = group.services.map(data)
        return message
    }

    static func actionSetType(_ kind: ActionSet.Kind) -> Home_V1_ActionSetType {
        switch kind {
        case .userDefined: .userDefined
        case .wakeUp: .wakeUp
        case .sleep: .sleep
        case .homeDeparture: .homeDeparture
        case .homeArrival: .homeArrival
        }
    }

    static func actionSet(_ actionSet: ActionSet) -> Home_V1_ActionSet {
        Home_V1_ActionSet(actionSet)
    }

    static func recurrence(_ recurrence: TriggerRecurrence) -> Home_V1_Recurrence {
        var message = Home_V1_Recurrence()
        message.count = recurrence.count
        switch recurrence.unit {
        case .second: message.unit = .second
        case .minute: message.unit = .minute
        case .hour: message.unit = .hour
        case .day: message.unit = .day
        case .week: message.unit = .week
        }
        return message
    }

    static func trigger(_ trigger: TimerTrigger) -> Home_V1_TimerTrigger {
        var message = Home_V1_TimerTrigger()
        message.id = data(trigger.id)
        message.name = trigger.name
        message.enabled = trigger.isEnabled
        message.fireDateMs = trigger.fireDate
        if let recurrence = trigger.recurrence { message.recurrence = self.recurrence(recurrence) }
        message.actionSetIds = trigger.actionSets.map(data)
        if let last = trigger.lastFireDate { message.lastFireDateMs = last }
        return message
    }

    static func user(_ user: HomeStore.HomeUser) -> Home_V1_User {
        var message = Home_V1_User()
        message.id = data(user.id)
        message.name = user.name
        message.administrator = user.role == .administrator
        message.owner = user.isOwner
        return message
    }

    static func role(_ role: HomeRole) -> Home_V1_Role {
        role == .administrator ? .administrator : .guest
    }

    /// A home's own fields (ListHomes); `view` adds everything in it (GetHome).
    static func home(_ home: Home, caller: AccountID, role: HomeRole, primary: Bool, revision: UInt64) -> Home_V1_Home {
        var message = Home_V1_Home()
        message.id = data(home.id)
        message.name = home.name
        message.primary = primary
        message.role = self.role(role)
        var room = Home_V1_Room()
        room.id = data(home.roomForEntireHome)
        room.name = HomeStore.roomForEntireHomeName
        message.roomForEntireHome = room
        message.timeZone = home.timeZone
        message.revision = revision
        message.owned = home.owner == caller
        message.currentUserID = data(UserID(account: caller, home: home.id))
        return message
    }

    /// A home with everything in it (GetHome); without its accessories, for ``HomeEncoder``, which
    /// writes them itself.
    static func home(_ view: HomeStore.HomeView, caller: AccountID, includingAccessories: Bool = true) -> Home_V1_Home {
        var message = home(
            view.home,
            caller: caller,
            role: view.role,
            primary: view.isPrimary,
            revision: view.home.revision
        )
        // Grouped once: filtering every accessory per room is rooms × accessories.
        var accessoriesByRoom: [RoomID: [AccessoryID]] = [:]
        for state in view.accessories {
            accessoriesByRoom[state.accessory.room, default: []].append(state.accessory.id)
        }
        message.roomForEntireHome = room(view.rooms[0], accessories: accessoriesByRoom[view.rooms[0].id] ?? [])
        message.rooms = view.rooms.dropFirst().map { room($0, accessories: accessoriesByRoom[$0.id] ?? []) }
        message.zones = view.zones.map(zone)
        if includingAccessories {
            message.accessories = view.accessories.map { state in
                // Each accessory has a few services, each a few characteristics: searched in place.
                let characteristics = state.services.flatMap(\.characteristics)
                return accessory(
                    state.accessory,
                    services: { id in state.services.first { $0.service.id == id }?.service },
                    characteristics: { id in characteristics.first { $0.characteristic.id == id } }
                )
            }
        }
        message.serviceGroups = view.serviceGroups.map(serviceGroup)
        message.actionSets = view.actionSets.map(actionSet)
        message.triggers = view.triggers.map(trigger)
        message.users = view.users.map(user)
        return message
    }

    static func account(_ account: Account) -> Home_V1_Account {
        var message = Home_V1_Account()
        message.id = data(account.id)
        message.name = account.name
        message.owner = account.isOwner
        message.createdMs = account.createdAt
        return message
    }

    /// A token's record as ListTokens and IssueToken show it; `now` tells whether it expired.
    static func token(_ token: AccessToken, at now: Int64) -> Home_V1_TokenInfo {
        var message = Home_V1_TokenInfo()
        message.id = data(token.id)
        message.accountID = data(token.account)
        message.createdMs = token.createdAt
        message.name = token.name
        message.scope = Home_V1_TokenScope(rawValue: token.limits.scope.rawValue) ?? .full
        message.homeIds = (token.limits.homes ?? []).sorted().map(data)
        message.expiresMs = token.limits.expiresAt ?? 0
        message.lastUsedMs = token.lastUsedAt
        message.expired = token.hasExpired(at: now)
        return message
    }
}

// Public, for servers that embed the store behind another protocol (bench/grpc).
extension Home_V1_CharacteristicValue {
    /// The message for a cached or written value.
    public init(_ value: CharacteristicValue) {
        self.init()
        switch value {
        case .bool(let bool): boolValue = bool
        case .int(let int): signedValue = int
        case .unsigned(let unsigned): unsignedValue = unsigned
        case .float(let float): floatValue = float
        case .string(let string): stringValue = string
        case .data(let bytes): dataValue = Data(bytes)
        }
    }
}

extension Home_V1_ActionSet {
    /// The message for an action set with its actions.
    public init(_ actionSet: ActionSet) {
        self.init()
        id = ProtoEncoding.data(actionSet.id)
        name = actionSet.name
        type = ProtoEncoding.actionSetType(actionSet.kind)
        actions = actionSet.actions.map { action in
            var entry = Home_V1_CharacteristicWriteAction()
            entry.id = ProtoEncoding.data(action.id)
            entry.characteristicID = ProtoEncoding.data(action.characteristic)
            entry.targetValue = Home_V1_CharacteristicValue(action.targetValue)
            return entry
        }
        executing = actionSet.isExecuting
        if let last = actionSet.lastExecutionDate { lastExecutionMs = last }
    }
}

extension Home_V1_ReadCharacteristicResponse {
    /// The answer to a read from the cache: the value, its time and the accessory's reachability.
    public init(_ reading: HomeStore.CachedReading) {
        self.init()
        if let value = reading.value { self.value = Home_V1_CharacteristicValue(value) }
        valueTimeMs = reading.updatedAt
        reachable = reading.isReachable
    }
}
