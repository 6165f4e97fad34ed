import HomeClient
import Testing
import Wire

/// Expects `body` to fail with `status` and (when given) the HomeKit code `code`.
func expectFailure(
    _ status: StatusCode,
    _ code: Int32? = nil,
    _ what: String = "",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record(
            "\(what): expected \(status.name) \(code.map(String.init) ?? ""), but it succeeded",
            sourceLocation: sourceLocation
        )
    } catch let error as HomeClientError {
        #expect(error.status == status, "\(what): \(error)", sourceLocation: sourceLocation)
        if let code { #expect(error.homeKitCode == code, "\(what): \(error)", sourceLocation: sourceLocation) }
    } catch {
        Issue.record("\(what): unexpected \(error)", sourceLocation: sourceLocation)
    }
}
