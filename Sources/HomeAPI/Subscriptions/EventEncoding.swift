import Foundation
import HomeProto
import HomeService
import SwiftProtobuf

/// Change events as `home.v1.Event` messages, as one subscriber sees them.
///
/// An event carries the objects it concerns in full, looked up when it is delivered: an object
/// changed again since is given in its newer state (the later events say so again), and one removed
/// since is given by what the event itself recorded (its id, and its name for additions).
extension HomeAPI {
    func eventMessage(_ change: HomeChange, skipped: UInt64, for caller: Caller) -> Home_V1_Event {
        Self.eventMessage(
            change,
            own: change.session == caller.session,
            payload: payload(of: change, skipped: skipped, for: caller)
        )
    }

    static func eventMessage(_ change: HomeChange, own: Bool, payload: Home_V1_Event.OneOf_Payload?) -> Home_V1_Event {
        var message = Home_V1_Event()
        message.homeID = ProtoEncoding.data(change.home)
        message.revision = change.revision
        message.timeMs = change.time
        message.initiator = initiator(change.initiator, in: change.home)
        message.own = own
        message.payload = payload
        return message
    }

    /// The service of a value event's characteristic, as the subscriber sees it now (none once removed).
    func service(ofValueEvent event: ChangeEvent, for caller: Caller) -> ServiceID? {
        event.object.flatMap { store.service(ofCharacteristic: CharacteristicID($0), as: caller.account) }
    }

    /// The payload of a `CharacteristicValueUpdated` event.
    static func valueUpdate(
        _ event: ChangeEvent,
        service: ServiceID?,
        skipped: UInt64
    ) -> Home_V1_CharacteristicValueUpdated {
        var update = Home_V1_CharacteristicValueUpdated()
        update.characteristicID = event.object.map(ProtoEncoding.data) ?? Data()
        update.accessoryID = event.container.map(ProtoEncoding.data) ?? Data()
        if let service { update.serviceID = ProtoEncoding.data(service) }
        if let value = event.value { update.value = ProtoEncoding.value(value) }
        update.skippedUpdates = skipped
        return update
    }

    /// A home's full state as a subscriber sees it, with the revision it is at (in memory: it is
    /// committed once the store's current ticket is).
    func homeState(_ id: HomeID, for caller: Caller) -> Home_V1_Home? {
        homeView(id, for: caller).map { ProtoEncoding.home($0, caller: caller.account) }
    }

    /// The home as a subscriber sees it, for ``HomeEncoder``, if they may.
    func homeView(_ id: HomeID, for caller: Caller) -> HomeStore.HomeView? {
        try? store.view(of: id, as: caller.account)
    }

    /// Who made a change in `home`; a member as their user id there, never their account's id.
    static func initiator(_ initiator: Initiator, in home: HomeID) -> Home_V1_Initiator {
        var message = Home_V1_Initiator()
        switch initiator {
        case .account(let id): message.userID = ProtoEncoding.data(UserID(account: id, home: home))
        case .accessory(let id): message.accessoryID = ProtoEncoding.data(id)
        case .server: message.server = true
        }
        return message
    }

    /// The user id of the member a user event names (by account, in the store's events).
    private func userID(_ event: ChangeEvent, in home: HomeID) -> Data {
        event.object.map { ProtoEncoding.data(UserID(account: AccountID($0), home: home)) } ?? Data()
    }

    /// The bridge of `accessory` when it is the bridge's first accessory: the one added event that
    /// carries the bridge, for which HomeKit sends none of its own (docs/API.md, "Guarantees").
    private func addedBridge(with accessory: Home_V1_Accessory, _ caller: Caller) -> Home_V1_Accessory? {
        guard accessory.bridged, let raw = UniqueIdentifier(bytes: accessory.bridgeID),
            let bridge = try? accessoryMessage(AccessoryID(raw), caller),
            bridge.bridgedAccessoryIds.first == accessory.id
        else { return nil }
        return bridge
    }

    // The switch names every kind the store emits; the ones it never emits (HomeKit callbacks this
    // server has no cause for, docs/API.md) have no payload.
    private func payload(of change: HomeChange, skipped: UInt64, for caller: Caller) -> Home_V1_Event.OneOf_Payload? {
        let event = change.event
        let object = event.object.map(ProtoEncoding.data) ?? Data()
        let container = event.container.map(ProtoEncoding.data) ?? Data()
        let name = event.name ?? ""
        switch event.kind {
        case .primaryHomeUpdated:
            return .primaryHomeUpdated(.with { $0.homeID = object })
        case .homeAdded:
            let home = homeState(change.home, for: caller) ?? .with { $0.id = object }
            return .homeAdded(.with { $0.home = home })
        case .homeRemoved:
            return .homeRemoved(.with { $0.homeID = object })
        case .homeNameUpdated:
            return .homeNameUpdated(.with { $0.name = name })
        case .homeTimeZoneUpdated:
            return .homeTimeZoneUpdated(.with { $0.timeZone = name })
        case .accessControlUpdated, .userAdded:
            let user =
                event.object.flatMap { try? userMessage(AccountID($0), in: change.home, caller) }
                ?? .with {
                    $0.id = userID(event, in: change.home)
                    $0.administrator = event.flag ?? false
                }
            return event.kind == .userAdded
                ? .userAdded(.with { $0.user = user }) : .accessControlUpdated(.with { $0.user = user })
        case .userRemoved:
            return .userRemoved(
                .with {
                    $0.userID = userID(event, in: change.home)
                    $0.subscriber = event.object == caller.account.raw
                }
            )
        case .accessoryAdded:
            let accessory =
                event.object.flatMap { try? accessoryMessage(AccessoryID($0), caller) }
                ?? .with {
                    $0.id = object
                    $0.name = name
                }
            return .accessoryAdded(
                .with {
                    $0.accessory = accessory
                    if let bridge = addedBridge(with: accessory, caller) { $0.bridge = bridge }
                }
            )
        case .accessoryRemoved:
            return .accessoryRemoved(.with { $0.accessoryID = object })
        case .accessoryNameUpdated:
            return .accessoryNameUpdated(
                .with {
                    $0.accessoryID = object
                    $0.name = name
                }
            )
        case .accessoryUnblocked:
            return .accessoryUnblocked(.with { $0.accessoryID = object })
        case .roomForAccessoryUpdated:
            return .roomForAccessoryUpdated(
                .with {
                    $0.accessoryID = object
                    $0.roomID = container
                }
            )
        case .roomAdded:
            let room =
                event.object.flatMap { try? roomMessage(RoomID($0), caller) }
                ?? .with {
                    $0.id = object
                    $0.name = name
                }
            return .roomAdded(.with { $0.room = room })
        case .roomRemoved:
            return .roomRemoved(.with { $0.roomID = object })
        case .roomNameUpdated:
            return .roomNameUpdated(
                .with {
                    $0.roomID = object
                    $0.name = name
                }
            )
        case .zoneAdded:
            let zone =
                event.object.flatMap { try? zoneMessage(ZoneID($0), caller) }
                ?? .with {
                    $0.id = object
                    $0.name = name
                }
            return .zoneAdded(.with { $0.zone = zone })
        case .zoneRemoved:
            return .zoneRemoved(.with { $0.zoneID = object })
        case .zoneNameUpdated:
            return .zoneNameUpdated(
                .with {
                    $0.zoneID = object
                    $0.name = name
                }
            )
        case .roomAddedToZone:
            return .roomAddedToZone(
                .with {
                    $0.roomID = object
                    $0.zoneID = container
                }
            )
        case .roomRemovedFromZone:
            return .roomRemovedFromZone(
                .with {
                    $0.roomID = object
                    $0.zoneID = container
                }
            )
        case .serviceGroupAdded:
            let group =
                event.object.flatMap { try? serviceGroupMessage(ServiceGroupID($0), caller) }
                ?? .with {
                    $0.id = object
                    $0.name = name
                }
            return .serviceGroupAdded(.with { $0.serviceGroup = group })
        case .serviceGroupRemoved:
            return .serviceGroupRemoved(.with { $0.serviceGroupID = object })
        case .serviceGroupNameUpdated:
            return .serviceGroupNameUpdated(
                .with {
                    $0.serviceGroupID = object
                    $0.name = name
                }
            )
        case .serviceAddedToGroup:
            return .serviceAddedToGroup(
                .with {
                    $0.serviceID = object
                    $0.serviceGroupID = container
                }
            )
        case .serviceRemovedFromGroup:
            return .serviceRemovedFromGroup(
                .with {
                    $0.serviceID = object
                    $0.serviceGroupID = container
                }
            )
        case .actionSetAdded, .actionSetActionsUpdated:
            let actionSet =
                event.object.flatMap { try? actionSetMessage(ActionSetID($0), caller) }
                ?? .with {
                    $0.id = object
                    $0.name = name
                }
            return event.kind == .actionSetAdded
                ? .actionSetAdded(.with { $0.actionSet = actionSet })
                : .actionSetActionsUpdated(.with { $0.actionSet = actionSet })
        case .actionSetRemoved:
            return .actionSetRemoved(.with { $0.actionSetID = object })
        case .actionSetNameUpdated:
            return .actionSetNameUpdated(
                .with {
                    $0.actionSetID = object
                    $0.name = name
                }
            )
        case .triggerAdded, .triggerUpdated:
            let trigger =
                event.object.flatMap { try? triggerMessage(TriggerID($0), caller) }
                ?? .with {
                    $0.id = object
                    $0.name = name
                    $0.enabled = event.flag ?? false
                }
            return event.kind == .triggerAdded
                ? .triggerAdded(.with { $0.trigger = trigger })
                : .triggerUpdated(.with { $0.trigger = trigger })
        case .triggerRemoved:
            return .triggerRemoved(.with { $0.triggerID = object })
        case .triggerNameUpdated:
            return .triggerNameUpdated(
                .with {
                    $0.triggerID = object
                    $0.name = name
                }
            )
        case .serviceNameUpdated:
            return .serviceNameUpdated(
                .with {
                    $0.serviceID = object
                    $0.accessoryID = container
                    $0.name = name
                }
            )
        case .associatedServiceTypeUpdated:
            return .associatedServiceTypeUpdated(
                .with {
                    $0.serviceID = object
                    $0.accessoryID = container
                    $0.associatedType = name
                }
            )
        case .reachabilityUpdated:
            return .reachabilityUpdated(
                .with {
                    $0.accessoryID = object
                    $0.reachable = event.flag ?? false
                }
            )
        case .characteristicValueUpdated:
            return .characteristicValueUpdated(
                Self.valueUpdate(event, service: service(ofValueEvent: event, for: caller), skipped: skipped)
            )
        case .firmwareVersionUpdated:
            return .firmwareVersionUpdated(
                .with {
                    $0.accessoryID = object
                    $0.firmwareVersion = name
                }
            )
        case .homesUpdated, .authorizationStatusUpdated, .addAccessoryRequest, .errorForAccessory,
            .homeHubStateUpdated, .supportedFeaturesUpdated, .servicesUpdated, .profileAdded, .profileRemoved,
            .newAccessoryFound, .newAccessoryRemoved:
            return nil
        }
    }
}
