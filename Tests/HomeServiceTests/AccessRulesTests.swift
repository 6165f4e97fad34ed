import Testing

@testable import HomeService

/// Every operation × {administrator, guest, non-member}.
@Suite struct AccessRulesTests {
    static let guestOperations: Set<HomeOperation> = [
        .readHome, .observeChanges, .readCharacteristic, .writeCharacteristic, .identifyAccessory, .executeActionSet,
        .enableNotification,
    ]

    static var matrix: [(HomeOperation, HomeRole?)] {
        HomeOperation.allCases.flatMap { operation in
            [(operation, HomeRole.administrator), (operation, .guest), (operation, nil)]
        }
    }

    @Test(arguments: matrix)
    func operationIsAllowedOnlyForTheRightRoles(operation: HomeOperation, role: HomeRole?) {
        let expected: HomeKitErrorCode? =
            switch role {
            case nil: .notFound
            case .guest: Self.guestOperations.contains(operation) ? nil : .insufficientPrivileges
            case .administrator: nil
            }
        do {
            try AccessRules.authorize(operation, role: role, homeName: "Home 1")
            #expect(expected == nil, "\(operation) was allowed for \(String(describing: role))")
        } catch {
            #expect(error.code == expected)
        }
    }

    @Test func nonMembersLearnNothingAboutTheHome() {
        do {
            try AccessRules.authorize(.renameHome, role: nil, homeName: "Secret Cabin")
        } catch {
            #expect(error == AccessRules.noSuchHome)
            #expect(!error.message.contains("Secret"))
        }
    }

    @Test func guestsAreToldWhatTheyLack() {
        do {
            try AccessRules.authorize(.addRoom, role: .guest, homeName: "Home 1")
        } catch {
            #expect(error.message == "addRoom in home \"Home 1\" needs an administrator; you are a guest")
        }
    }
}
