import Foundation
import HomeClient
import HomeProto
import Testing

/// `rpc-client` as a person uses it, against a real `homed`: the README's quick start, the exit codes,
/// and a command of each object kind.
@Suite(.serialized, .timeLimit(.minutes(3))) struct CommandLineTests {
    struct Run {
        let status: Int32
        let output: String
        let errors: String
    }

    static var clientPath: String {
        URL(fileURLWithPath: HomedProcess.executablePath).deletingLastPathComponent()
            .appendingPathComponent("rpc-client").path
    }

    func cli(_ server: HomedProcess, _ arguments: String...) throws -> Run {
        try run(server, arguments)
    }

    /// Runs `rpc-client ARGUMENTS --endpoint … --token-file …` and waits for it.
    func run(_ server: HomedProcess, _ arguments: [String]) throws -> Run {
        let tokenFile = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(server.pid).token")
        try Data(server.ownerToken.utf8).write(to: tokenFile)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.clientPath)
        process.arguments = arguments + ["--endpoint", "unix:\(server.socketPath)", "--token-file", tokenFile.path]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus,
            output: String(decoding: out, as: UTF8.self),
            errors: String(decoding: err, as: UTF8.self)
        )
    }

    @Test func theQuickStartWorksAndEveryObjectHasItsCommands() async throws {
        let server = try await HomedProcess.launch()
        // The README's quick start.
        #expect(try cli(server, "home", "add", "My Home").output.hasPrefix("added home \"My Home\""))
        #expect(try cli(server, "room", "add", "--home", "My Home", "卧室").status == 0)
        #expect(try cli(server, "account", "create", "Alice").status == 0)
        #expect(try cli(server, "user", "add", "--home", "My Home", "Alice").status == 0)
        let show = try cli(server, "home", "show", "My Home")
        #expect(show.status == 0)
        #expect(show.output.contains("卧室") && show.output.contains("Alice"))
        // Wide characters take two columns: 卧室 lines up under "Default Room" (12 columns + 2).
        #expect(show.output.contains("\n卧室          0  "), "\(show.output)")

        // One command of each kind, by name, as a person types them.
        for arguments in [
            ["zone", "add", "--home", "My Home", "Upstairs"],
            ["zone", "add-room", "--home", "My Home", "Upstairs", "卧室"],
            ["zone", "remove-room", "--home", "My Home", "Upstairs", "卧室"],
            ["zone", "rename", "--home", "My Home", "Upstairs", "Top Floor"],
            ["service-group", "add", "--home", "My Home", "Lights"],
            ["service-group", "rename", "--home", "My Home", "Lights", "All Lights"],
            ["action-set", "add", "--home", "My Home", "Reading"],
            ["action-set", "rename", "--home", "My Home", "Reading", "Reading Time"],
            ["trigger", "add", "--home", "My Home", "Dusk", "--at", "2031-01-15T07:00:00Z", "--every", "1 day"],
            ["trigger", "rename", "--home", "My Home", "Dusk", "Evening"],
            ["trigger", "set-fire-date", "--home", "My Home", "Evening", "--at", "2031-01-16T07:00:00Z"],
            ["trigger", "set-recurrence", "--home", "My Home", "Evening", "--every", "2 hours"],
            ["trigger", "add-action-set", "--home", "My Home", "Evening", "Reading Time"],
            ["trigger", "remove-action-set", "--home", "My Home", "Evening", "Reading Time"],
            ["service", "list", "--home", "My Home"],
            ["account", "list-tokens"],
        ] {
            let result = try run(server, arguments)
            #expect(result.status == 0, "\(arguments.joined(separator: " ")): \(result.errors)")
        }
        let triggers = try cli(server, "trigger", "list", "--home", "My Home")
        #expect(triggers.output.contains("Evening") && triggers.output.contains("every 2 hour"))
        // Tables name what a zone and the trigger's action sets hold, not only count them.
        #expect(try cli(server, "zone", "add-room", "--home", "My Home", "Top Floor", "卧室").status == 0)
        #expect(try cli(server, "home", "show", "My Home").output.contains("\nTop Floor  卧室  "))
        let added = try cli(server, "trigger", "add-action-set", "--home", "My Home", "Evening", "Reading Time")
        #expect(added.status == 0, "\(added.errors)")
        let triggerTable = try cli(server, "trigger", "list", "--home", "My Home").output
        #expect(triggerTable.contains("  never       Reading Time  "), "\(triggerTable)")

        // Exit codes: 64 for a usage error, 1 for a call the server refused, with its reason.
        #expect(try cli(server, "trigger", "add", "--home", "My Home", "Late", "--at", "tomorrow").status == 64)
        #expect(try cli(server, "call", "home.v1.HomeService/ListHomes", "{not json").status == 64)
        #expect(try cli(server, "watch", "--kinds", "no-such-kind").status == 64)
        let refused = try cli(server, "room", "add", "--home", "My Home", "Bad/Name")
        #expect(refused.status == 1)
        #expect(refused.errors.contains("InvalidParameter") || refused.errors.contains("35"))
        let missing = try cli(server, "room", "add", "--home", "Nowhere", "Den")
        #expect(missing.status == 1 && missing.errors.contains("no home named \"Nowhere\""))

        // A backup, into a new file of the server's backup directory (here the store's), by name.
        let backup = try cli(server, "backup", "cli-backup.sqlite")
        let backupPath = server.directory.appendingPathComponent("cli-backup.sqlite").path
        #expect(backup.status == 0 && backup.output.hasPrefix("wrote \(backupPath) "), "\(backup.errors)")
        #expect(try cli(server, "backup", "/tmp/cli-backup.sqlite").status == 64)
        let overTheStore = try cli(server, "backup", "homed.sqlite")
        #expect(overTheStore.status == 1 && overTheStore.errors.contains("ALREADY_EXISTS"))

        // `call` with hand-written JSON, and a stream through it.
        let listed = try cli(server, "call", "home.v1.HomeService/ListHomes", "{}")
        #expect(listed.status == 0 && listed.output.contains("My Home"))
        // A refusal through `call` shows its HomeKit code and field, as the typed commands do.
        let refusedCall = try cli(server, "call", "home.v1.HomeService/AddHome", #"{"name": "Bad/Name"}"#)
        #expect(refusedCall.status == 1, "\(refusedCall.errors)")
        #expect(refusedCall.errors.contains("[HomeKit ") && refusedCall.errors.contains("(field name)"))

        // The health check by service name, as grpc.health.v1 clients ask.
        for service in [
            "", "home.v1.HomeService", "home.v1.AccountService", "home.v1.AdminService", "home.v1.AccessoryLink",
        ] {
            let health = try cli(server, "health", "--service", service)
            #expect(health.status == 0 && health.output.contains("SERVING"), "\(service): \(health.errors)")
        }
        let unknown = try cli(server, "health", "--service", "home.v1.NoSuchService")
        #expect(unknown.status == 1 && unknown.errors.contains("NOT_FOUND"))
        server.stop()
    }

    /// `call` takes a method by any tail only it ends with and ids as UUIDs, names the field and
    /// the request type of a malformed request, and `info` prints tables.
    @Test func callTakesShortNamesAndUUIDsAndNamesTheFieldAtFault() async throws {
        let server = try await HomedProcess.launch()
        let home = try cli(server, "call", "AddHome", #"{"name": "Short"}"#)
        #expect(home.status == 0, "\(home.errors)")
        let client = server.client()
        let homeID = try #require(try await client.listHomes().first { $0.name == "Short" }?.id.uuid)
        await client.close()
        let room = try cli(
            server,
            "call",
            "HomeService/AddRoom",
            #"{"homeId": "\#(homeID.uuidString)", "name": "Study"}"#
        )
        #expect(room.status == 0 && room.output.contains("Study"), "\(room.errors)")
        // The same id in base64, as responses print it, still works; a UUID under a name stays text
        // (which a name may not be: the hyphen).
        let base64 = withUnsafeBytes(of: homeID.uuid) { Data($0) }.base64EncodedString()
        let named = try cli(server, "call", "AddRoom", #"{"home_id": "\#(base64)", "name": "\#(homeID.uuidString)"}"#)
        #expect(named.status == 1 && named.errors.contains("room name \"\(homeID.uuidString)\""), "\(named.errors)")

        let unknown = try cli(server, "call", "NoSuchMethod", "{}")
        #expect(unknown.status == 64 && unknown.errors.contains("unknown method NoSuchMethod"))
        let wrongType = try cli(server, "call", "AddRoom", #"{"name": "Den", "homeId": 5}"#)
        #expect(wrongType.status == 64, "\(wrongType.errors)")
        #expect(wrongType.errors.contains(#"field "homeId" of home.v1.AddRoomRequest"#), "\(wrongType.errors)")
        #expect(wrongType.errors.contains("Usage: rpc-client call"), "\(wrongType.errors)")
        let noSuchField = try cli(server, "call", "AddRoom", #"{"colour": "red"}"#)
        #expect(noSuchField.errors.contains(#"no field "colour""#), "\(noSuchField.errors)")
        let notObject = try cli(server, "call", "AddRoom", "[1]")
        #expect(notObject.status == 64 && notObject.errors.contains("must be a JSON object"), "\(notObject.errors)")

        let info = try cli(server, "info")
        #expect(info.status == 0, "\(info.errors)")
        #expect(info.output.contains("SERVER") && info.output.contains("METHOD"), "\(info.output)")
        #expect(info.output.contains("home.v1.HomeService/AddRoom"), "\(info.output)")
        let json = try cli(server, "info", "--json")
        #expect(json.output.hasPrefix("{") && json.output.contains("\"uptimeMs\""), "\(json.output)")
        server.stop()
    }

    /// The README's accessory simulator session: a bridge of three lights paired from the CLI, a light
    /// switched, the simulator seeing the write.
    @Test func aSimulatedBridgeIsPairedAndSwitchedFromTheCommandLine() async throws {
        let server = try await HomedProcess.launch()
        #expect(try cli(server, "home", "add", "My Home").status == 0)
        let state = server.directory.appendingPathComponent("simulator.json").path
        let simulator = try BackgroundClient(
            server,
            "accessory",
            "simulate",
            "--service",
            "lightbulb",
            "--count",
            "3",
            "--bridge",
            "Hall Bridge",
            "--setup-code",
            "482-19-375",
            "--state",
            state
        )
        defer { simulator.stop() }
        func logged() -> String { simulator.logged() }
        try await eventually { logged().contains("advertising \"Hall Bridge\"") }

        let wrong = try cli(
            server,
            "accessory",
            "add",
            "--home",
            "My Home",
            "--setup-code",
            "111-22-333",
            "Hall Bridge"
        )
        #expect(wrong.status == 1 && wrong.errors.contains("AccessoryPairingFailed"))
        let added = try cli(
            server,
            "accessory",
            "add",
            "--home",
            "My Home",
            "--setup-code",
            "482-19-375",
            "Hall Bridge"
        )
        #expect(added.status == 0 && added.output.contains("added Lightbulb 3"), "\(added.errors)")
        let list = try cli(server, "accessory", "list", "--home", "My Home")
        let light = try #require(list.output.split(separator: "\n").first { $0.hasPrefix("Lightbulb 2") })
        let characteristic = String(light.split(separator: " ").last!)
        #expect(try cli(server, "characteristic", "write", "--home", "My Home", characteristic, "true").status == 0)
        #expect(logged().contains("write   \(characteristic) = true"))
        // The same by name, as a person would type it: the accessory's name and the type's catalog
        // name, in any case; the table names the type too.
        #expect(light.contains(" On "), "\(light)")
        let firstLight = try #require(list.output.split(separator: "\n").first { $0.hasPrefix("Lightbulb 1") })
        let firstID = String(firstLight.split(separator: " ").last!)
        #expect(try cli(server, "characteristic", "write", "--home", "My Home", "lightbulb 1/on", "true").status == 0)
        #expect(logged().contains("write   \(firstID) = true"))
        let unknownType = try cli(server, "characteristic", "read", "--home", "My Home", "Lightbulb 1/Brightness")
        #expect(unknownType.status == 1 && unknownType.errors.contains("it has: On"), "\(unknownType.errors)")
        let notAName = try cli(server, "characteristic", "read", "--home", "My Home", "Lightbulb 1")
        #expect(notAName.status == 64, "\(notAName.errors)")
        // An action: add-action prints the id that set-action takes.
        #expect(try cli(server, "action-set", "add", "--home", "My Home", "Lights On").status == 0)
        let action = try cli(
            server,
            "action-set",
            "add-action",
            "--home",
            "My Home",
            "Lights On",
            characteristic,
            "true"
        )
        #expect(action.status == 0 && action.output.hasPrefix("added action "), "\(action.errors)")
        let actionID = String(action.output.split(separator: " ")[2])
        let changed = try cli(server, "action-set", "set-action", "--home", "My Home", "Lights On", actionID, "false")
        #expect(changed.status == 0, "\(changed.errors)")
        // The id as `--json` prints it (base64, protobuf's JSON mapping) is taken too.
        let hex = Array(actionID.replacingOccurrences(of: "-", with: ""))
        let base64ID = Data(stride(from: 0, to: hex.count, by: 2).map { UInt8(String(hex[$0...$0 + 1]), radix: 16)! })
            .base64EncodedString()
        let again = try cli(server, "action-set", "set-action", "--home", "My Home", "Lights On", base64ID, "true")
        #expect(again.status == 0, "\(again.errors)")
        // `show` lists the writes by characteristic name, with the ids set-action takes.
        let shown = try cli(server, "action-set", "show", "--home", "My Home", "lights on")
        let row = try #require(shown.output.split(separator: "\n").first { $0.hasPrefix(actionID) }, "\(shown.output)")
        #expect(row.contains("Lightbulb 2/On") && row.hasSuffix("true"), "\(row)")
        try await eventually { logged().contains("paired: credential saved") }
        #expect(FileManager.default.fileExists(atPath: state))

        // The server goes away for longer than the simulator's first reconnect delay: the
        // simulator keeps trying (it used to exit on the refused connection) and attaches again
        // with the ids the server gave it (it used to send its id-less description, was refused as
        // unknown, and dropped its pairing).
        server.stop()
        try await eventually { logged().contains("retrying in 2 s") }
        try await server.start()
        try await eventually { logged().contains("attached \"Hall Bridge\"") }
        try await eventually {
            // The bridge and its three lights (an unreachable one leaves the field out).
            let listed = try cli(server, "accessory", "list", "--home", "My Home", "--json").output
            return listed.components(separatedBy: "\"reachable\":true").count - 1 == 4
        }
        #expect(simulator.process.isRunning)
        server.stop()
    }

    /// A home "Flat" with a simulated lamp `name` in it, paired from the CLI; the simulator takes
    /// `options` too. The caller stops it.
    func pairedLamp(_ server: HomedProcess, named name: String, _ options: String...) async throws -> BackgroundClient {
        #expect(try cli(server, "home", "add", "Flat").status == 0)
        let state = server.directory.appendingPathComponent("\(name).json").path
        let simulator = try BackgroundClient(
            server,
            ["accessory", "simulate", "--name", name, "--setup-code", "273-61-904", "--state", state] + options
        )
        try await eventually { simulator.logged().contains("advertising \"\(name)\"") }
        let added = try cli(server, "accessory", "add", "--home", "Flat", "--setup-code", "273-61-904", name)
        #expect(added.status == 0, "\(added.errors)")
        return simulator
    }

    /// An action set whose one write the accessory refuses, with the README's `--refuse-writes
    /// -70403` (a negative number, which used to read as an unknown option): the failure names the
    /// write that failed and why.
    @Test func anActionSetsFailedWriteIsNamed() async throws {
        let server = try await HomedProcess.launch()
        defer { server.stop() }
        let simulator = try await pairedLamp(server, named: "Busy Lamp", "--refuse-writes", "-70403")
        defer { simulator.stop() }
        #expect(try cli(server, "action-set", "add", "--home", "Flat", "Lights").status == 0)
        let action = try cli(server, "action-set", "add-action", "--home", "Flat", "Lights", "Busy Lamp/On", "true")
        #expect(action.status == 0, "\(action.errors)")
        let executed = try cli(server, "action-set", "execute", "--home", "Flat", "Lights")
        #expect(executed.status == 1)
        #expect(executed.errors.contains("[HomeKit 63 ActionSetExecutionFailed]"), "\(executed.errors)")
        #expect(executed.errors.contains("\n  Busy Lamp/On: HomeKit 14: "), "\(executed.errors)")
    }

    /// `watch` names what changed, prints a value as `characteristic read` does and a reachability
    /// change spelled out (protobuf's JSON gave ids, "1" for true, and left out a false `reachable`).
    @Test func watchPrintsValuesAndReachabilityAsWritten() async throws {
        let server = try await HomedProcess.launch()
        defer { server.stop() }
        let simulator = try await pairedLamp(server, named: "Lamp")
        defer { simulator.stop() }
        let token = server.directory.appendingPathComponent("watch.token")
        try Data(server.ownerToken.utf8).write(to: token)
        let watch = try BackgroundClient(
            server,
            "watch",
            "--home",
            "Flat",
            "--characteristic",
            "Lamp/On",
            "--token-file",
            token.path
        )
        defer { watch.stop() }
        // With --kinds, the renames it does not print still name what it prints.
        let filtered = try BackgroundClient(
            server,
            ["watch", "--home", "Flat", "--characteristic", "Lamp/On", "--token-file", token.path, "--kinds"]
                + ["characteristic-value-updated", "reachability-updated"]
        )
        defer { filtered.stop() }
        // The watches are subscribed once a change made after their start shows up.
        try await eventually {
            _ = try cli(server, "characteristic", "write", "--home", "Flat", "Lamp/On", "true")
            return [watch, filtered].allSatisfy { $0.logged().contains("characteristic-value-updated") }
        }
        #expect(watch.logged().contains(" characteristic=\"Lamp/On\" value=true"), "\(watch.logged())")
        // Names it learnt after it started, from the change that made them.
        #expect(try cli(server, "accessory", "rename", "--home", "Flat", "Lamp", "Desk Lamp").status == 0)
        simulator.stop()
        try await eventually { watch.logged().contains(" accessory=\"Desk Lamp\" reachable=false") }
        try await eventually { filtered.logged().contains(" accessory=\"Desk Lamp\" reachable=false") }
        #expect(watch.logged().contains("accessory-name-updated"))
        #expect(!filtered.logged().contains("accessory-name-updated"), "\(filtered.logged())")
    }
}

/// `rpc-client ARGUMENTS` running against `server` until stopped (a simulator, a watch), its output in
/// a file.
struct BackgroundClient {
    let process = Process()
    let log: URL

    init(_ server: HomedProcess, _ arguments: String...) throws {
        try self.init(server, arguments)
    }

    init(_ server: HomedProcess, _ arguments: [String]) throws {
        log = server.directory.appendingPathComponent("simulator-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: CommandLineTests.clientPath)
        process.arguments = arguments + ["--endpoint", "unix:\(server.socketPath)"]
        process.standardOutput = try FileHandle(forWritingTo: log)
        try process.run()
    }

    func logged() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Reaped before the test ends: a Process whose child was never waited for stays alive
    /// (LeakSanitizer reported it, and everything it holds, as leaked).
    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
