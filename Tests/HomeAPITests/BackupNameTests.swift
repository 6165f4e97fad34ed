import HomeService
import Testing

@testable import HomeAPI

/// Which file names BackupStore takes: plain names that print as what they are.
@Suite struct BackupNameTests {
    @Test(arguments: [
        "backup.sqlite", "Sauvegarde du 28 novembre.sqlite", "备份.sqlite", "a b", "x",
        String(repeating: "b", count: 255),
    ])
    func aPrintablePlainNameIsTaken(name: String) throws {
        #expect(try AdminMethods.backupPath(named: name, in: "/var/backups") == "/var/backups/" + name)
    }

    @Test(arguments: [
        "", ".hidden", "../up", "a/b", String(repeating: "b", count: 256), "line\nbreak", "carriage\rreturn",
        "\u{1B}[2Jclear", "tab\there", "nul\u{0}byte", "rtl\u{202E}txt.exe", "zero\u{200B}width", "bom\u{FEFF}",
        "line\u{2028}separator", "   ", " leading", "trailing ", "trailing\u{3000}", "private\u{E000}use",
    ])
    func anythingElseIsRefusedWithoutEchoingIt(name: String) {
        do {
            _ = try AdminMethods.backupPath(named: name, in: "/var/backups")
            Issue.record("took \(name.debugDescription)")
        } catch {
            #expect(error.error.code == .invalidParameter)
            #expect(error.field == "file_name")
            #expect(name.isEmpty || !error.error.message.contains(name), "the message echoes the name")
        }
    }
}
