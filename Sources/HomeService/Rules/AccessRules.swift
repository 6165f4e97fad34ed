/// A member's role in a home. A user who is not a member has no role, and the home does not exist
/// for them.
public enum HomeRole: String, CaseIterable, Sendable {
    /// The creator, and anyone made administrator: may do everything.
    case administrator
    /// May identify accessories, read and write characteristics, observe changes and execute action
    /// sets; nothing else.
    case guest
}

/// Everything a caller can ask of a home, for authorization (docs/HOMEKIT.md, "Objects and
/// operations" and "Access").
public enum HomeOperation: String, CaseIterable, Sendable {
    // Reading and observing.
    case readHome
    case observeChanges
    case readCharacteristic
    // What guests may also do.
    case writeCharacteristic
    case identifyAccessory
    case executeActionSet
    // Administration.
    case renameHome
    case updateHomeTimeZone
    case removeHome
    case addRoom
    case removeRoom
    case renameRoom
    case addZone
    case removeZone
    case renameZone
    case addRoomToZone
    case removeRoomFromZone
    case addAccessory
    case removeAccessory
    case renameAccessory
    case assignAccessoryToRoom
    case unblockAccessory
    case renameService
    case updateAssociatedServiceType
    case enableNotification
    case addServiceGroup
    case removeServiceGroup
    case renameServiceGroup
    case addServiceToGroup
    case removeServiceFromGroup
    case addActionSet
    case removeActionSet
    case renameActionSet
    case addAction
    case removeAction
    case updateActionTargetValue
    case addTrigger
    case removeTrigger
    case renameTrigger
    case enableTrigger
    case updateTriggerFireDate
    case updateTriggerRecurrence
    case addActionSetToTrigger
    case removeActionSetFromTrigger
    case addUser
    case removeUser
    case updateUserAccess

    /// Whether a guest may do this.
    public var isAllowedForGuests: Bool {
        switch self {
        case .readHome, .observeChanges, .readCharacteristic, .writeCharacteristic, .identifyAccessory,
            .executeActionSet, .enableNotification:
            true
        default:
            false
        }
    }
}

/// Decides whether a caller may perform an operation on a home.
public enum AccessRules {
    /// - Parameters:
    ///   - role: the caller's role in the home, or `nil` if the caller is not a member.
    ///   - homeName: the home's name, used only in messages to members: evaluated only for a
    ///     refusal (a caller that had to copy the home to name it paid for that on every write).
    /// - Throws: ``HomeServiceError`` with 2 (NotFound) for a non-member, worded exactly as for a
    ///   home that does not exist, and 17 (InsufficientPrivileges) for a guest asking for more.
    public static func authorize(
        _ operation: HomeOperation,
        role: HomeRole?,
        homeName: @autoclosure () -> String
    ) throws(HomeServiceError) {
        guard let role else { throw noSuchHome }
        if role == .guest && !operation.isAllowedForGuests {
            throw HomeServiceError(
                .insufficientPrivileges,
                "\(operation.rawValue) in home \"\(homeName())\" needs an administrator; you are a guest"
            )
        }
    }

    /// The one answer for a home the caller may not see, whether or not it exists.
    public static let noSuchHome = HomeServiceError(.notFound, "no such home")
}
