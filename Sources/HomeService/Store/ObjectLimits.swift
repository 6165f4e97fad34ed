/// How many objects an account and a home may hold, so that no authenticated caller can grow the
/// server without bound. Past a limit, adding fails with 49 (MaximumObjectLimitReached) and
/// changes nothing. `homed` sets these from its flags; the defaults are generous for one household.
public struct ObjectLimits: Hashable, Sendable {
    /// Homes an account is a member of (its own and shared ones).
    public var homesPerAccount = 100
    /// Bearer tokens an account holds at once.
    public var tokensPerAccount = 100
    /// Members of a home, the owner included.
    public var usersPerHome = 100
    /// Rooms of a home, besides the room for the entire home.
    public var roomsPerHome = 500
    public var zonesPerHome = 100
    /// Accessories of a home, bridged ones included.
    public var accessoriesPerHome = 10_000
    public var serviceGroupsPerHome = 500
    /// Action sets of a home, the four built-in ones included.
    public var actionSetsPerHome = 500
    public var actionsPerActionSet = 500
    public var triggersPerHome = 500

    public init() {}

    /// - Throws: 49 when `count` objects already reach `limit`.
    static func check(
        _ count: Int,
        adding: Int = 1,
        against limit: Int,
        _ what: @autoclosure () -> String
    )
        throws(HomeServiceError)
    {
        // Subtracting, so that a limit of Int.max ("none") cannot overflow.
        guard adding > limit || count > limit - adding else { return }
        throw HomeServiceError(
            .maximumObjectLimitReached,
            "\(what()) would exceed the limit of \(limit) (it has \(count))"
        )
    }
}
