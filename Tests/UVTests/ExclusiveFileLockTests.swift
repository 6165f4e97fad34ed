import Foundation
import Testing
import UV

@Suite struct ExclusiveFileLockTests {
    @Test func aHeldLockIsRefusedUntilReleasedAndRecordsItsText() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lock-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var first = try ExclusiveFileLock.acquire(path)
        #expect(first != nil)
        try first?.record("1234\n")
        try first?.record("42\n")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "42\n")
        // Another open of the file is another holder, even in this process.
        #expect(try ExclusiveFileLock.acquire(path) == nil)
        first = nil
        #expect(try ExclusiveFileLock.acquire(path) != nil)
    }

    @Test func aFileThatCannotBeOpenedIsAnError() {
        #expect(throws: UVError.self) { try ExclusiveFileLock.acquire("/nonexistent-homerpc-dir/x.lock") }
    }
}
