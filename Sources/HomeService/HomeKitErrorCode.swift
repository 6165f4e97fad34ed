/// HomeKit's `HMErrorCode` numbers (docs/HOMEKIT.md), carried in every domain error and in the
/// `homekit_code` of `home.v1.ErrorDetails`. The numbers are Apple's and must not change.
public enum HomeKitErrorCode: Int32, CaseIterable, Sendable {
    case unexpectedError = -1
    case alreadyExists = 1
    case notFound = 2
    case invalidParameter = 3
    case accessoryNotReachable = 4
    case readOnlyCharacteristic = 5
    case writeOnlyCharacteristic = 6
    case notificationNotSupported = 7
    case operationTimedOut = 8
    case accessoryPoweredOff = 9
    case accessDenied = 10
    case objectAssociatedToAnotherHome = 11
    case objectNotAssociatedToAnyHome = 12
    case objectAlreadyAssociatedToHome = 13
    case accessoryIsBusy = 14
    case operationInProgress = 15
    case accessoryOutOfResources = 16
    case insufficientPrivileges = 17
    case accessoryPairingFailed = 18
    case invalidDataFormatSpecified = 19
    case nilParameter = 20
    case unconfiguredParameter = 21
    case invalidClass = 22
    case operationCancelled = 23
    case roomForHomeCannotBeInZone = 24
    case noActionsInActionSet = 25
    case noRegisteredActionSets = 26
    case missingParameter = 27
    case fireDateInPast = 28
    case roomForHomeCannotBeUpdated = 29
    case actionInAnotherActionSet = 30
    case objectWithSimilarNameExistsInHome = 31
    case homeWithSimilarNameExists = 32
    case renameWithSimilarName = 33
    case cannotRemoveNonBridgeAccessory = 34
    case nameContainsProhibitedCharacters = 35
    case nameDoesNotStartWithValidCharacters = 36
    case recurrenceTooSmall = 42
    case invalidValueType = 43
    case valueLowerThanMinimum = 44
    case valueHigherThanMaximum = 45
    case stringLongerThanMaximum = 46
    case homeAccessNotAuthorized = 47
    case operationNotSupported = 48
    case maximumObjectLimitReached = 49
    case accessorySentInvalidResponse = 50
    case stringShorterThanMinimum = 51
    case genericError = 52
    case securityFailure = 53
    case communicationFailure = 54
    case messageAuthenticationFailed = 55
    case invalidMessageSize = 56
    case accessoryDiscoveryFailed = 57
    case clientRequestError = 58
    case accessoryResponseError = 59
    case nameDoesNotEndWithValidCharacters = 60
    case accessoryIsBlocked = 61
    case invalidAssociatedServiceType = 62
    case actionSetExecutionFailed = 63
    case actionSetExecutionPartialSuccess = 64
    case actionSetExecutionInProgress = 65
    case accessoryOutOfCompliance = 66
    case notificationAlreadyEnabled = 68
    case recurrenceMustBeOnSpecifiedBoundaries = 69
    case dateMustBeOnSpecifiedBoundaries = 70
    case cannotActivateTriggerTooFarInFuture = 71
    case recurrenceTooLarge = 72
    case readWritePartialSuccess = 73
    case readWriteFailure = 74
    case addAccessoryFailed = 79
    case cannotUnblockNonBridgeAccessory = 81
    case cannotRemoveBuiltinActionSet = 83
    case invalidOrMissingAuthorizationData = 87
    case bridgedAccessoryNotReachable = 88
    case incompatibleAccessory = 93
    case objectWithSimilarNameExists = 95
    case timedOutWaitingForAccessory = 100

    /// HomeKit's name for the code, e.g. "InsufficientPrivileges".
    public var name: String {
        let caseName = String(describing: self)
        return caseName.prefix(1).uppercased() + caseName.dropFirst()
    }
}
