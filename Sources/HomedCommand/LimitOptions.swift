import ArgumentParser
import HomeService

/// The object limits, as flags: past one, adding fails with HomeKit error 49 and changes nothing.
struct LimitOptions: ParsableArguments {
    private static let defaults = ObjectLimits()

    @Option(help: "Most homes an account may be a member of.")
    var maxHomesPerAccount = defaults.homesPerAccount

    @Option(help: "Most bearer tokens an account may hold at once.")
    var maxTokensPerAccount = defaults.tokensPerAccount

    @Option(help: "Most users (members) of a home, its owner included.")
    var maxUsersPerHome = defaults.usersPerHome

    @Option(help: "Most rooms of a home, besides the room for the entire home.")
    var maxRoomsPerHome = defaults.roomsPerHome

    @Option(help: "Most zones of a home.")
    var maxZonesPerHome = defaults.zonesPerHome

    @Option(help: "Most accessories of a home, bridged ones included.")
    var maxAccessoriesPerHome = defaults.accessoriesPerHome

    @Option(help: "Most service groups of a home.")
    var maxServiceGroupsPerHome = defaults.serviceGroupsPerHome

    @Option(help: "Most action sets of a home, the four built-in ones included.")
    var maxActionSetsPerHome = defaults.actionSetsPerHome

    @Option(help: "Most actions of one action set.")
    var maxActionsPerActionSet = defaults.actionsPerActionSet

    @Option(help: "Most timer triggers of a home.")
    var maxTriggersPerHome = defaults.triggersPerHome

    func validate() throws {
        let values = [
            maxHomesPerAccount, maxTokensPerAccount, maxUsersPerHome, maxRoomsPerHome, maxZonesPerHome,
            maxAccessoriesPerHome, maxServiceGroupsPerHome, maxActionSetsPerHome, maxActionsPerActionSet,
            maxTriggersPerHome,
        ]
        guard values.allSatisfy({ $0 >= 1 }) else {
            throw ValidationError("every --max-…-per-… limit must be at least 1")
        }
        guard maxActionSetsPerHome >= 4 else {
            throw ValidationError("--max-action-sets-per-home must be at least 4 (the built-in action sets)")
        }
    }

    var objectLimits: ObjectLimits {
        var limits = ObjectLimits()
        limits.homesPerAccount = maxHomesPerAccount
        limits.tokensPerAccount = maxTokensPerAccount
        limits.usersPerHome = maxUsersPerHome
        limits.roomsPerHome = maxRoomsPerHome
        limits.zonesPerHome = maxZonesPerHome
        limits.accessoriesPerHome = maxAccessoriesPerHome
        limits.serviceGroupsPerHome = maxServiceGroupsPerHome
        limits.actionSetsPerHome = maxActionSetsPerHome
        limits.actionsPerActionSet = maxActionsPerActionSet
        limits.triggersPerHome = maxTriggersPerHome
        return limits
    }
}
