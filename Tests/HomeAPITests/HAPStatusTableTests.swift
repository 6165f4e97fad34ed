import HomeService
import Testing
import Wire

@testable import HomeAPI

/// What a controller gets when an accessory refuses a command: docs/API.md's HAP table is the
/// server's, and every code in it travels under the status the document's status table gives it.
@Suite struct HAPStatusTableTests {
    @Test func theDocumentsHAPTableIsTheServers() throws {
        let document = try APIDocument.load()
        let served = Dictionary(uniqueKeysWithValues: HAPStatus.table.map { ($0.status, Int32($0.code.rawValue)) })
        #expect(document.homeKitCodesOfHAPStatuses == served)
        // Additional authorization is not the user's rights.
        #expect(served[-70411] == 87 && served[-70401] == 17)
    }

    @Test func everyCodeOfTheHAPTableHasItsDocumentedStatus() throws {
        let document = try APIDocument.load()
        for entry in HAPStatus.table {
            let code = Int32(entry.code.rawValue)
            let status = HomeKitStatus.table.first { $0.0 == entry.code }?.1 ?? .unknown
            #expect(status != .unknown, "HAP \(entry.status) gives \(code), which has no status")
            #expect(document.status(of: code) == status, "HAP \(entry.status) gives \(code)")
        }
    }
}
