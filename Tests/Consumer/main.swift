// A service written against the SDK as another team would, built outside the repository by
// scripts/check-consumer.sh (as a package depending on HomeRPC by URL, with `traits: []`). It runs
// its own homed and checks what the SDK promises, failing loudly on the first broken promise:
//
//   consumer HOMED-EXECUTABLE WORK-DIRECTORY MUTE-SOCKET
//
// MUTE-SOCKET is a Unix socket whose server accepts and never answers (the script holds it).
import Foundation
import HomeClient
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    print("usage: consumer HOMED-EXECUTABLE WORK-DIRECTORY MUTE-SOCKET")
    exit(2)
}
let homedPath = arguments[1]
let work = URL(fileURLWithPath: arguments[2])
let muteSocket = arguments[3]

func check(_ condition: Bool, _ what: String) {
    guard condition else {
        print("FAILED: \(what)")
        exit(1)
    }
    print("ok: \(what)")
}

/// homed on a store in the work directory, started and killed with SIGKILL as a crash would.
final class Homed: @unchecked Sendable {
    let socket = work.appendingPathComponent("homed.sock").path
    let tokenFile = work.appendingPathComponent("owner.token").path
    private var process: Process?

    var endpoint: Endpoint { .unix(path: socket) }
    var token: String {
        (try? String(contentsOfFile: tokenFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            ?? ""
    }

    func start() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: homedPath)
        process.arguments = [
            "--port", "0", "--unix-socket", socket, "--store", work.appendingPathComponent("store.sqlite").path,
            "--owner-token-file", tokenFile, "--log-level", "info",
        ]
        // Started once its log says it listens (the token file is written before); the rest of its
        // log is read and dropped so that the pipe never fills.
        let log = Pipe()
        process.standardError = log
        let (lines, arrived) = AsyncStream.makeStream(of: String.self)
        log.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { arrived.finish() } else { arrived.yield(String(decoding: data, as: UTF8.self)) }
        }
        try process.run()
        self.process = process
        var seen = ""
        for await text in lines {
            seen += text
            if seen.contains("listening") { return }
        }
        check(false, "homed listens")
    }

    func kill9() {
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }
}

/// A LogHandler that keeps the messages, as a service's own logging would receive them.
final class LogCapture: Sendable {
    let messages = Mutex<[String]>([])

    var logger: Logger {
        var logger = Logger(label: "consumer") { _ in Handler(capture: self) }
        logger.logLevel = .debug
        return logger
    }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel = Logger.Level.debug
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            capture.messages.withLock { $0.append("\(event.message)") }
        }
    }
}

// The checks, in a function of no actor as a service's request handler is (top-level code runs on
// the main actor).
func run() async throws {
    let homed = Homed()
    try await homed.start()
    let log = LogCapture()
    // Retries patient enough to span a restart of homed (about 4 s in all).
    let client = HomeClient(
        endpoint: homed.endpoint,
        token: homed.token,
        retryPolicy: RetryPolicy(maxAttempts: 8, maxBackoff: .seconds(1)),
        logger: log.logger
    )
    let home = try await client.addHome(named: "Consumer Home")
    let handle = client.home(home.id.uuid)

    // A domain failure is typed, with HomeKit's code and the field.
    do {
        _ = try await handle.addRoom(named: "")
        check(false, "an empty room name is refused")
    } catch {
        check(error.status == .invalidArgument && error.field == "name", "an empty name fails with its field")
    }

    // The connection's states, and a change stream with its reconnect marker, across a kill -9.
    var states = await client.connectionStates().makeAsyncIterator()
    check(await states.next() == .connected, "the state is connected")
    var changes = client.changes(ChangeOptions(homes: [home.id.uuid], snapshot: true)).includingReconnects()
        .makeAsyncIterator()
    guard case .event(let snapshot)? = try await changes.next(), snapshot.snapshot.home.name == "Consumer Home" else {
        check(false, "the stream begins with the home's snapshot")
        return
    }

    // The service's own request, with its own key: applied, then homed is killed, then the service
    // retries it with the same key: the same room comes back, and the home has it once.
    let key = "consumer-request-\(UUID().uuidString)"
    let study = try await HomeClient.$callOptions.withValue(CallOptions(idempotencyKey: key)) {
        try await handle.addRoom(named: "Study")
    }
    homed.kill9()
    // The SDK's own retries span the restart: the call is made while homed is down, and homed
    // starts again once an attempt has met it down.
    let refusals = await client.connectionStates()
    async let restarted: Void = {
        for await state in refusals {
            if case .disconnected(let reason) = state, reason.contains("refused") { break }
        }
        try await homed.start()
    }()
    let again = try await HomeClient.$callOptions.withValue(CallOptions(timeout: .seconds(20), idempotencyKey: key)) {
        try await handle.addRoom(named: "Study")
    }
    try await restarted
    check(again.id == study.id, "a retry across kill -9 under one key answers with the first outcome")
    let rooms = try await handle.get().rooms.filter { $0.name == "Study" }
    check(rooms.count == 1, "and the room was added once")

    // The stream saw the drop, marked where it resumed, and goes on with the missed change.
    var sawReconnect = false
    var sawStudy = false
    while !sawStudy, let change = try await changes.next() {
        switch change {
        case .reconnected: sawReconnect = true
        case .event(let event):
            if case .roomAdded(let added)? = event.payload, added.room.name == "Study" { sawStudy = true }
        }
    }
    check(sawStudy, "the change stream delivered the room")
    _ = sawReconnect  // the room may have come before the kill; the marker is checked below
    var seen: [ConnectionState] = []
    while let state = await states.next() {
        seen.append(state)
        if state == .connected { break }
    }
    let disconnected = seen.firstIndex { if case .disconnected = $0 { true } else { false } }
    check(disconnected != nil && seen.last == .connected, "the states show disconnected, then connected: \(seen)")
    let other = HomeClient(endpoint: homed.endpoint, token: homed.token)
    _ = try await other.home(home.id.uuid).addRoom(named: "Hall")
    while let change = try await changes.next() {
        if case .reconnected = change { sawReconnect = true }
        if case .event(let event) = change, case .roomAdded? = event.payload { break }
    }
    check(sawReconnect, "the change stream marked its reconnect")
    check(
        log.messages.withLock { $0.contains("change stream reconnected") && $0.contains("disconnected") },
        "the Logger received the disconnect and the reconnect"
    )

    // close() ends a live change stream.
    let closing = HomeClient(endpoint: homed.endpoint, token: homed.token)
    var closed = closing.changes(ChangeOptions(homes: [home.id.uuid], snapshot: true)).makeAsyncIterator()
    _ = try await closed.next()
    let ending = Task { [closed] in
        var closed = closed
        return try await closed.next()
    }
    await closing.close()
    check(try await ending.value == nil, "close() ends a change stream")

    // Cancelling the task that iterates a stream throws CancellationError.
    let (opened, signal) = AsyncStream.makeStream(of: Void.self)
    let following = Task {
        var stream = client.changes(ChangeOptions(homes: [home.id.uuid], snapshot: true)).makeAsyncIterator()
        _ = try await stream.next()
        signal.finish()
        _ = try await stream.next()
    }
    for await _ in opened {}
    following.cancel()
    do {
        try await following.value
        check(false, "a cancelled stream throws")
    } catch {
        check(error is CancellationError, "a cancelled stream throws CancellationError")
    }

    // A call's deadline covers connecting: a server that accepts and never answers the handshake.
    let mute = HomeClient(endpoint: .unix(path: muteSocket), token: "hrt_none")
    let started = ContinuousClock.now
    do {
        _ = try await HomeClient.$callOptions.withValue(CallOptions(timeout: .seconds(1))) {
            try await mute.listHomes()
        }
        check(false, "a mute server fails the call")
    } catch {
        let took = ContinuousClock.now - started
        let unsent = (error as? HomeClientError)?.wasSent == false
        check(took < .seconds(3) && unsent, "the 1 s deadline is met while connecting (\(took), \(error))")
    }

    // Standard type constants name HAP's UUIDs.
    check(ServiceTypes.lightbulb == "00000043-0000-1000-8000-0026BB765291", "ServiceTypes.lightbulb is HAP's")

    try await client.home(home.id.uuid).remove()
    await other.close()
    await mute.close()
    await client.close()
    homed.kill9()
    print("consumer: every check passed")
}

try await run()
