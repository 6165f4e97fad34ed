import Foundation
public import HomeProto
public import HomeService
import RPCServices
import SwiftProtobuf
public import Wire

/// How a HomeKit error reaches the wire: the call's status code from one table, and the HomeKit code
/// with its name, the object and the offending field in a `home.v1.ErrorDetails`. docs/API.md prints
/// the same table.
public enum HomeKitStatus {
    /// The status code for each HomeKit code the server returns; anything else is UNKNOWN.
    public static let table: [(HomeKitErrorCode, StatusCode)] = [
        (.notFound, .notFound),
        (.alreadyExists, .alreadyExists),
        (.objectAlreadyAssociatedToHome, .alreadyExists),
        (.objectWithSimilarNameExistsInHome, .alreadyExists),
        (.homeWithSimilarNameExists, .alreadyExists),
        (.renameWithSimilarName, .alreadyExists),
        (.objectWithSimilarNameExists, .alreadyExists),
        (.notificationAlreadyEnabled, .alreadyExists),
        (.insufficientPrivileges, .permissionDenied),
        (.accessDenied, .permissionDenied),
        (.accessoryPairingFailed, .permissionDenied),
        (.invalidOrMissingAuthorizationData, .permissionDenied),
        (.invalidParameter, .invalidArgument),
        (.missingParameter, .invalidArgument),
        (.nameContainsProhibitedCharacters, .invalidArgument),
        (.nameDoesNotStartWithValidCharacters, .invalidArgument),
        (.nameDoesNotEndWithValidCharacters, .invalidArgument),
        (.invalidValueType, .invalidArgument),
        (.valueLowerThanMinimum, .invalidArgument),
        (.valueHigherThanMaximum, .invalidArgument),
        (.stringLongerThanMaximum, .invalidArgument),
        (.stringShorterThanMinimum, .invalidArgument),
        (.recurrenceMustBeOnSpecifiedBoundaries, .invalidArgument),
        (.dateMustBeOnSpecifiedBoundaries, .invalidArgument),
        (.recurrenceTooSmall, .invalidArgument),
        (.recurrenceTooLarge, .invalidArgument),
        (.invalidAssociatedServiceType, .invalidArgument),
        (.incompatibleAccessory, .invalidArgument),
        (.accessorySentInvalidResponse, .invalidArgument),
        (.fireDateInPast, .outOfRange),
        (.cannotActivateTriggerTooFarInFuture, .outOfRange),
        (.readOnlyCharacteristic, .failedPrecondition),
        (.writeOnlyCharacteristic, .failedPrecondition),
        (.notificationNotSupported, .failedPrecondition),
        (.operationNotSupported, .failedPrecondition),
        (.objectAssociatedToAnotherHome, .failedPrecondition),
        (.roomForHomeCannotBeInZone, .failedPrecondition),
        (.roomForHomeCannotBeUpdated, .failedPrecondition),
        (.noActionsInActionSet, .failedPrecondition),
        (.noRegisteredActionSets, .failedPrecondition),
        (.actionInAnotherActionSet, .failedPrecondition),
        (.cannotRemoveNonBridgeAccessory, .failedPrecondition),
        (.accessoryIsBlocked, .failedPrecondition),
        (.cannotUnblockNonBridgeAccessory, .failedPrecondition),
        (.cannotRemoveBuiltinActionSet, .failedPrecondition),
        (.accessoryNotReachable, .unavailable),
        (.bridgedAccessoryNotReachable, .unavailable),
        (.accessoryIsBusy, .unavailable),
        (.communicationFailure, .unavailable),
        (.timedOutWaitingForAccessory, .unavailable),
        (.operationTimedOut, .deadlineExceeded),
        (.maximumObjectLimitReached, .resourceExhausted),
        (.accessoryOutOfResources, .resourceExhausted),
        (.actionSetExecutionFailed, .aborted),
        (.actionSetExecutionPartialSuccess, .aborted),
        (.actionSetExecutionInProgress, .aborted),
        (.operationInProgress, .aborted),
        (.operationCancelled, .cancelled),
        (.genericError, .internal),
        (.unexpectedError, .internal),
    ]

    private static let codes: [Int32: StatusCode] = Dictionary(
        table.map { ($0.0.rawValue, $0.1) },
        uniquingKeysWith: { first, _ in first }
    )

    /// The status code a HomeKit code travels under.
    public static func statusCode(for code: HomeKitErrorCode) -> StatusCode {
        codes[code.rawValue] ?? .unknown
    }

    /// The status of a call whose change a failed commit lost (a full disk, an I/O error): INTERNAL
    /// with 52 GenericError, as every later change gets from the stopped store.
    public static func uncommitted(_ failure: StoreError) -> CallStatus {
        status(for: HomeServiceError(.genericError, "the change could not be made durable: \(failure)"))
    }

    /// The call status for a domain failure.
    /// - Parameters:
    ///   - object: the object the failure concerns, when the request named one.
    ///   - field: the request field that carried the offending input.
    ///   - items: per-item results, for calls that act on many objects.
    public static func status(
        for error: HomeServiceError,
        object: UniqueIdentifier? = nil,
        field: String = "",
        items: [Home_V1_ItemResult] = []
    ) -> CallStatus {
        var details = Home_V1_ErrorDetails()
        details.homekitCode = Int32(error.code.rawValue)
        details.homekitName = error.code.name
        if let object { details.objectID = Data(object.bytes) }
        details.field = field
        details.itemResults = items
        let bytes = (try? details.encodedBytes()) ?? []
        return CallStatus(code: statusCode(for: error.code), message: error.message, details: bytes)
    }
}
