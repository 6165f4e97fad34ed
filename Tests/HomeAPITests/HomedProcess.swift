import Foundation
import HomeClient
import RPCClient
import Testing
import UV

/// A real `homed` process on a Unix socket (and a free TCP port) in a temporary directory, with its
/// store kept across restarts. Unchecked: a test drives it from one task at a time.
final class HomedProcess: @unchecked Sendable {
    let directory: URL
    private var process: Process?
    private(set) var ownerToken = ""
    /// Flags added to every start (a test may change them between restarts).
    var extraArguments: [String]
    /// The server's log level (`info` logs the listening ports, which ``tcpPort()`` reads).
    var logLevel = "error"

    var socketPath: String { directory.appendingPathComponent("homed.sock").path }
    var storePath: String { directory.appendingPathComponent("homed.sqlite").path }
    /// Where homed's standard error goes when launched with `capturingLog`.
    var logPath: String { directory.appendingPathComponent("homed.log").path }
    private var capturesLog = false
    /// The largest file homed may write, in KiB (the shell's `ulimit -f`), with SIGXFSZ ignored so
    /// that a write past it fails as on a full disk instead of killing the process; `nil`: no limit.
    var fileSizeLimitKiB: Int?
    /// Milliseconds the server's clock is shifted by (negative: back), for cases that depend on the
    /// date: `nil` runs `homed` itself, a number the tests' `clocked-homed` on that shifted clock.
    var clockOffsetMilliseconds: Int64?
    /// Whether the clock moves while the server runs (``advanceClock(by:)``): `clocked-homed` reads
    /// ``clockOffsetMilliseconds`` from a file at every reading.
    private var clockMoves = false
    private var clockFilePath: String { directory.appendingPathComponent("clock-offset").path }
    var endpoint: Endpoint { .unix(path: socketPath) }
    var pid: Int32 { process?.processIdentifier ?? 0 }

    /// The server executable, built beside this test bundle.
    static var executablePath: String { builtExecutable("homed") }

    /// An executable of the package, built beside this test bundle.
    static func builtExecutable(_ name: String) -> String {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(name).path
    }

    private init(arguments: [String]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("homed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        extraArguments = arguments
    }

    /// A new server on a new store, answering.
    /// - Parameter clockOffset: see ``clockOffsetMilliseconds``.
    static func launch(
        arguments: [String] = [],
        capturingLog: Bool = false,
        logLevel: String = "error",
        clockOffset: Int64? = nil,
        movableClock: Bool = false
    ) async throws -> HomedProcess {
        let server = try HomedProcess(arguments: arguments)
        server.capturesLog = capturingLog
        server.logLevel = logLevel
        server.clockOffsetMilliseconds = movableClock ? clockOffset ?? 0 : clockOffset
        server.clockMoves = movableClock
        if movableClock { try server.writeClockOffset() }
        try await server.start()
        return server
    }

    deinit {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts the server and waits until it answers on its socket.
    func start() async throws {
        try? FileManager.default.removeItem(atPath: socketPath)
        let process = Process()
        var arguments =
            [
                "--port", "0", "--unix-socket", socketPath, "--store", storePath,
                "--owner-token-file", directory.appendingPathComponent("owner.token").path, "--log-level", logLevel,
                "--drain-grace-period", "5",
            ] + extraArguments
        var executable = Self.executablePath
        if let clockOffsetMilliseconds {
            executable = Self.builtExecutable("clocked-homed")
            arguments.insert(clockMoves ? "@" + clockFilePath : String(clockOffsetMilliseconds), at: 0)
        }
        if let fileSizeLimitKiB {
            // bash's `ulimit -f` counts KiB; an ignored signal stays ignored across exec.
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments =
                ["-c", "ulimit -f \(fileSizeLimitKiB) && trap '' XFSZ && exec \"$0\" \"$@\"", executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        process.standardOutput = FileHandle.nullDevice
        if capturesLog {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: logPath)
        }
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: socketPath) {
            guard process.isRunning, Date() < deadline else {
                throw HomedFailure(message: "homed did not start (exit \(process.terminationStatus))")
            }
            usleep(10_000)
        }
        // The socket file appears at bind, a moment before the server listens: wait for an answer.
        while true {
            do {
                let probe = try await RPCClient.connect(to: endpoint)
                await probe.close()
                break
            } catch {
                guard process.isRunning, Date() < deadline else {
                    let state = process.isRunning ? "still running" : "exited with status \(process.terminationStatus)"
                    let log = capturesLog ? (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" : ""
                    throw HomedFailure(
                        message:
                            "homed does not answer (\(state)): \(error)\(log.isEmpty ? "" : "; its log ends: \(log.suffix(2_000))")"
                    )
                }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        if ownerToken.isEmpty {
            ownerToken = try String(contentsOf: directory.appendingPathComponent("owner.token"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// Moves a movable clock (``launch(arguments:capturingLog:logLevel:clockOffset:movableClock:)``)
    /// forward: the running server reads the new time at once.
    func advanceClock(by milliseconds: Int64) throws {
        precondition(clockMoves, "launched without a movable clock")
        clockOffsetMilliseconds = (clockOffsetMilliseconds ?? 0) + milliseconds
        try writeClockOffset()
    }

    private func writeClockOffset() throws {
        var offset = (clockOffsetMilliseconds ?? 0).littleEndian
        let bytes = withUnsafeBytes(of: &offset) { Data($0) }
        if let file = FileHandle(forWritingAtPath: clockFilePath) {
            // In place: the server maps the file, so it must not be replaced.
            try file.seek(toOffset: 0)
            try file.write(contentsOf: bytes)
            try file.close()
        } else {
            try bytes.write(to: URL(fileURLWithPath: clockFilePath))
        }
    }

    /// SIGTERM: drains and exits; returns its exit status.
    @discardableResult
    func stop() -> Int32 {
        guard let process else { return -1 }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            Issue.record("homed did not stop within 20 s of SIGTERM")
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        self.process = nil
        return process.terminationStatus
    }

    /// SIGKILL at once.
    func crash() {
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    func restart() async throws {
        stop()
        try await start()
    }

    /// The TCP port of the listener for our protocol, read from the log: needs `capturingLog` and
    /// ``logLevel`` `info`.
    func tcpPort() throws -> Int {
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        for line in log.split(separator: "\n") where line.contains("listening") && line.contains("protocol=homerpc") {
            guard let range = line.range(of: #"endpoint=127\.0\.0\.1:([0-9]+)"#, options: .regularExpression),
                let port = Int(line[range].split(separator: ":").last ?? "")
            else { continue }
            return port
        }
        throw HomedFailure(message: "no listening line for our TCP port in the log: \(log.suffix(1_000))")
    }

    /// Sends `signal` to the server.
    func send(_ signal: Int32) {
        guard let process else { return }
        kill(process.processIdentifier, signal)
    }

    /// A client as the owner (or with another token).
    func client(token: String? = nil) -> HomeClient {
        HomeClient(endpoint: endpoint, token: token ?? ownerToken, timeout: .seconds(20))
    }
}

struct HomedFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
