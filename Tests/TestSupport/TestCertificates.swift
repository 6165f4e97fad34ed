import Foundation

/// The certificates of scripts/make-test-certificates.sh, made once per test process in a temporary
/// folder: a CA and the server and client certificates it signed, and the bad ones tests expect to be
/// refused (another CA's, an expired one, a self-signed one).
public enum TestCertificates {
    /// The folder holding `NAME.pem` and `NAME.key` for each certificate the script makes.
    public static let directory: String = {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("homerpc-certificates-\(getpid())").path
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/make-test-certificates.sh").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, folder]
        do {
            try process.run()
        } catch {
            fatalError("cannot run \(script): \(error)")
        }
        process.waitUntilExit()
        precondition(process.terminationStatus == 0, "\(script) failed with status \(process.terminationStatus)")
        return folder
    }()

    /// The certificate `name` (`ca`, `server`, `client`, `other-ca`, `expired`, ...).
    public static func certificate(_ name: String) -> String { "\(directory)/\(name).pem" }
    /// The key of the certificate `name`.
    public static func key(_ name: String) -> String { "\(directory)/\(name).key" }
}
