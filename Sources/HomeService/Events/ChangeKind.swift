/// Every HomeKit delegate callback, as an event kind (docs/HOMEKIT.md, "Change notifications").
/// The raw values are persisted in the event log and will be sent on the wire: never renumber.
public enum ChangeKind: UInt8, CaseIterable, Sendable {
    // HMHomeManagerDelegate
    /// Reload everything (also what a subscriber gets when its resume point is no longer retained).
    case homesUpdated = 1
    case primaryHomeUpdated = 2
    case homeAdded = 3
    case homeRemoved = 4
    case authorizationStatusUpdated = 5
    case addAccessoryRequest = 6

    // HMHomeDelegate
    case homeNameUpdated = 10
    case accessControlUpdated = 11
    case accessoryAdded = 12
    case accessoryRemoved = 13
    case roomForAccessoryUpdated = 14
    case roomAdded = 15
    case roomRemoved = 16
    case roomNameUpdated = 17
    case zoneAdded = 18
    case zoneRemoved = 19
    case zoneNameUpdated = 20
    case roomAddedToZone = 21
    case roomRemovedFromZone = 22
    case serviceGroupAdded = 23
    case serviceGroupRemoved = 24
    case serviceGroupNameUpdated = 25
    case serviceAddedToGroup = 26
    case serviceRemovedFromGroup = 27
    case actionSetAdded = 28
    case actionSetRemoved = 29
    case actionSetNameUpdated = 30
    case actionSetActionsUpdated = 31
    case triggerAdded = 32
    case triggerRemoved = 33
    case triggerNameUpdated = 34
    /// Enabled or disabled, fired, fire date, recurrence or action sets changed.
    case triggerUpdated = 35
    case userAdded = 36
    case userRemoved = 37
    case accessoryUnblocked = 38
    case errorForAccessory = 39
    case homeHubStateUpdated = 40
    case supportedFeaturesUpdated = 41
    /// Not a HomeKit callback: the home's time zone (which its triggers count days in) changed.
    case homeTimeZoneUpdated = 42

    // HMAccessoryDelegate
    case accessoryNameUpdated = 50
    case serviceNameUpdated = 51
    case associatedServiceTypeUpdated = 52
    case servicesUpdated = 53
    case profileAdded = 54
    case profileRemoved = 55
    case reachabilityUpdated = 56
    case characteristicValueUpdated = 57
    case firmwareVersionUpdated = 58

    // HMAccessoryBrowserDelegate
    case newAccessoryFound = 60
    case newAccessoryRemoved = 61

}
