import Foundation
import SQLite
import Testing

@testable import HomeService

/// No acknowledged change is lost to kill -9: a child process adds rooms and acknowledges each one
/// after its commit; we kill it at a random moment, reopen the store and look for every acknowledged
/// room, then run SQLite's full integrity check.
@Suite struct CrashSafetyTests {
    static let runs = 24

    /// The child executable, built beside this test bundle.
    static var childPath: String {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("store-crash-child")
            .path
    }

    @Test func acknowledgedChangesSurviveSIGKILL() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("crash.sqlite").path
        var generator = SystemRandomNumberGenerator()
        var acknowledgedInAll = 0
        for run in 1...Self.runs {
            let seed = UInt64.random(in: 1...UInt64(Int64.max), using: &generator)
            let delay = UInt32.random(in: 0...250_000, using: &generator)
            let acknowledged = try killChild(path: path, seed: seed, afterMicroseconds: delay)
            acknowledgedInAll += acknowledged.count

            let store = try HomeStore.open(.file(path: path))
            let present = Set(store.rooms.values.map(\.name))
            let missing = acknowledged.filter { !present.contains($0) }
            #expect(missing.isEmpty, "run \(run) (seed \(seed), \(delay) µs): \(missing.count) acknowledged rooms lost")
            let database = try Database(path: path)
            #expect(try database.scalar("PRAGMA integrity_check")?.text == "ok", "run \(run)")
        }
        // The kills must land while work is going on, not only before it starts.
        #expect(acknowledgedInAll > Self.runs)
    }

    /// Starts the child, waits for "ready", lets it work for `delay`, kills it with SIGKILL and
    /// returns the rooms it acknowledged.
    private func killChild(path: String, seed: UInt64, afterMicroseconds delay: UInt32) throws -> [String] {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: Self.childPath)
        child.arguments = [path, String(seed)]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        let reader = output.fileHandleForReading
        var text = ""
        while !text.contains("ready\n") {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        #expect(text.contains("ready\n"), "the child did not start: \(text)")
        usleep(delay)
        kill(child.processIdentifier, SIGKILL)
        text += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL)
        // A line cut by the kill was never acknowledged in full: only complete lines count.
        let complete = text.hasSuffix("\n") ? text : String(text[..<(text.lastIndex(of: "\n") ?? text.startIndex)])
        return complete.split(separator: "\n").filter { $0.hasPrefix("ack ") }.map { String($0.dropFirst(4)) }
    }
}
