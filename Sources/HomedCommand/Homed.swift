public import ArgumentParser
import Foundation
import HomeAPI
import HomeProto
import HomeService
import Logging
import RPCServer
import RPCServices
import TLS
import UV
import Wire

/// The HomeRPC server: serves the built-in services on TCP (and optionally a Unix socket) until
/// SIGTERM or SIGINT, then drains gracefully. A second signal stops at once. SIGHUP reloads the TLS
/// certificate and key.
///
/// A library, so that the `homed` executable runs it on the system's clock and the tests' server
/// (Tests/ClockedHomed) on a clock set to the date a test needs, with no test-only option in the
/// product.
public struct Homed: ParsableCommand {
    public static let version = "0.1.0"

    public static let configuration = CommandConfiguration(
        commandName: "homed",
        abstract: "Serve the HomeRPC protocol.",
        version: version
    )

    @Option(help: "IP address to listen on (IPv4 or IPv6 literal).")
    var host = "127.0.0.1"

    @Option(help: "TCP port to listen on; 0 picks a free port.")
    var port = 7420

    @Option(help: "Also listen on this Unix-domain socket path (a stale socket file there is replaced).")
    var unixSocket: String?

    @Option(
        help: """
            Also serve gRPC (HTTP/2 cleartext, prior knowledge) on this TCP port of --host, onto the same methods; \
            0 picks a free port. Off unless set.
            """
    )
    var grpcPort: Int?

    @Option(
        help: """
            Serve Prometheus metrics (GET /metrics, text format) on this TCP port of --metrics-host; \
            0 picks a free port. Off unless set.
            """
    )
    var metricsPort: Int?

    @Option(help: "The address the metrics port listens on (IPv4 or IPv6 literal).")
    var metricsHost = "127.0.0.1"

    @Option(
        help: "Most connections served at once; more are refused with a GOAWAY (the open-file limit is raised to fit)."
    )
    var maxConnections = 16_384

    @Option(help: "Largest frame payload accepted, in bytes (16384...16777216).")
    var maxFrameSize = 1 << 20

    @Option(
        help: """
            Most bytes all connections together may hold for their peers (requests not yet decoded, \
            answers not yet sent, open calls' large metadata); past it the connections holding the most are closed. Also bounds \
            what all subscriptions hold (home states and events waiting, the characteristics they name).
            """
    )
    var maxBufferedBytes = 1 << 30

    @Option(help: "Most calls in flight per connection.")
    var maxConcurrentStreams = 100

    @Option(help: "Seconds without input before a keepalive PING; 0 disables keepalive.")
    var keepaliveInterval = 30

    @Option(help: "Seconds to wait for the PONG before closing.")
    var keepaliveTimeout = 10

    @Option(help: "Seconds a new connection has to send its preface and SETTINGS.")
    var handshakeTimeout = 10

    @Option(help: "Seconds a call may wait for its request message after CALL_START.")
    var requestTimeout = 10

    @Option(help: "Seconds a connection may stay without calls before it is closed; 0 disables.")
    var idleTimeout = 300

    @Option(help: "Seconds in-flight calls may run after a drain starts.")
    var drainGracePeriod = 10

    @Option(
        help: "Layout events that may wait for one slow subscriber before it gets a Resync instead (values coalesce)."
    )
    var maxPendingEventsPerSubscription = 4096

    // The earlier name, from when only home states counted, still works.
    @Option(
        name: [.customLong("max-unread-bytes"), .customLong("max-unread-state-bytes")],
        help: """
            Bytes one connection's subscriptions may hold: home states (snapshots, resyncs) waiting \
            unread as encoded, about 80 for each other event waiting, and the characteristics they \
            name; the stream that passes it ends with RESOURCE_EXHAUSTED.
            """
    )
    var maxUnreadBytes = 16 << 20

    @Option(help: "Changes kept per home for subscribers that resume; older resume points get a Resync.")
    var maxEventsPerHome = 10_000

    @Option(help: "Hours a change is kept for subscribers that resume.")
    var eventRetentionHours = 24

    @Option(help: "Milliseconds a forwarded write, fresh read or identify waits for the accessory (then 8).")
    var accessoryTimeout = 10_000

    @Option(help: "Unpaired accessories the browser holds at once; more advertisements are refused.")
    var maxAdvertisedAccessories = 1024

    @Option(
        help:
            "Bytes of accessory descriptions (encoded) the browser holds at once; more advertisements are refused."
    )
    var maxAdvertisedBytes = 64 << 20

    @Option(help: "The SQLite store (created on first start, with WAL files and a .lock file beside it).")
    var store = "homed.sqlite"

    @Flag(
        help: """
            Leave the store readable by other processes while the server runs (SQLite's normal \
            locking: `sqlite3 homed.sqlite ".backup …"` works, and each commit makes six lock calls \
            more). By default the server holds the file locked: back it up with `rpc-client backup`.
            """
    )
    var sharedStore = false

    @Option(
        help: """
            Where `rpc-client backup NAME` writes its copies of the store (by file name only); by \
            default the store's own directory.
            """
    )
    var backupDirectory: String?

    @Option(help: "Where the first start writes the owner account's token (mode 0600).")
    var ownerTokenFile = "homed-owner.token"

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    @Option(
        help: """
            Warn when the event loop runs callbacks for this many milliseconds without polling (no \
            connection is served meanwhile), or a commit takes as long; 0 (the default) disables, \
            as Redis's latency monitor is off unless asked for. Watching costs two clock reads per \
            loop iteration.
            """
    )
    var stallWarningMs = 0

    @OptionGroup(title: "TLS")
    var tls: TLSOptions

    @OptionGroup(title: "Object limits")
    var limits: LimitOptions

    public init() {}

    public func validate() throws {
        guard (16_384...16_777_216).contains(maxFrameSize) else {
            throw ValidationError("--max-frame-size must be within 16384...16777216")
        }
        guard maxBufferedBytes > 0 else {
            throw ValidationError("--max-buffered-bytes must be positive")
        }
        guard maxConnections > 0, maxConcurrentStreams > 0 else {
            throw ValidationError("--max-connections and --max-concurrent-streams must be positive")
        }
        guard maxEventsPerHome > 0, eventRetentionHours > 0 else {
            throw ValidationError("--max-events-per-home and --event-retention-hours must be positive")
        }
        guard accessoryTimeout > 0, maxAdvertisedAccessories > 0, maxAdvertisedBytes > 0 else {
            throw ValidationError(
                "--accessory-timeout, --max-advertised-accessories and --max-advertised-bytes must be positive"
            )
        }
        guard maxUnreadBytes > 0 else {
            throw ValidationError("--max-unread-bytes must be positive")
        }
        guard maxPendingEventsPerSubscription > 0 else {
            throw ValidationError("--max-pending-events-per-subscription must be positive")
        }
        guard (0...3_600_000).contains(stallWarningMs) else {
            throw ValidationError("--stall-warning-ms must be within 0...3600000")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    var serverConfiguration: ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.maxConnections = maxConnections
        configuration.maxFrameSize = maxFrameSize
        configuration.maxBufferedBytes = maxBufferedBytes
        configuration.connection.maxConcurrentStreams = maxConcurrentStreams
        configuration.connection.keepaliveIntervalMilliseconds =
            keepaliveInterval > 0 ? UInt64(keepaliveInterval) * 1000 : nil
        configuration.connection.keepaliveTimeoutMilliseconds = UInt64(max(1, keepaliveTimeout)) * 1000
        configuration.connection.handshakeTimeoutMilliseconds = UInt64(max(1, handshakeTimeout)) * 1000
        configuration.requestTimeoutMilliseconds = UInt64(max(1, requestTimeout)) * 1000
        configuration.connection.idleTimeoutMilliseconds = idleTimeout > 0 ? UInt64(idleTimeout) * 1000 : nil
        configuration.connection.drainGracePeriodMilliseconds = UInt64(max(0, drainGracePeriod)) * 1000
        // Probes check health without a token, and accessories prove themselves with their pairing
        // credential (or, unpaired, prove nothing); everything else needs a token.
        // Reflection hands out what proto/ publishes anyway.
        configuration.unauthenticatedMethods = Set(
            HealthService.methods + ReflectionService.methods + HomeAPI.accessoryMethods
        )
        configuration.statusDetailsType = HomeAPI.statusDetailsType
        return configuration
    }

    public func run() throws {
        try run(clock: HomeStore.wallClock)
    }

    /// Serves with `clock` (milliseconds since the Unix epoch) as the store's time: event times,
    /// execution dates, timer triggers.
    public func run(clock: @escaping @Sendable () -> Int64) throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "homed")
        logger.info("starting", metadata: ["version": "\(Self.version)", "pid": "\(getpid())"])
        let backups = try Self.backupDirectory(backupDirectory, store: store)
        // Held until the process ends.
        let storeLock = try StoreLock.acquire(storePath: store)
        defer { withExtendedLifetime(storeLock) {} }

        // One descriptor per connection, plus the store's files, listeners and wakers.
        let openFiles = OpenFileLimit.raise(toAtLeast: maxConnections + 64)
        if openFiles < maxConnections + 64 {
            logger.warning(
                "the open-file limit is below --max-connections: connections past it fail to accept",
                metadata: ["open files": "\(openFiles)", "max connections": "\(maxConnections)"]
            )
        }
        let loop = try EventLoop()
        // The writer thread reports commits through a waker; the store handles them on the loop.
        let storeHolder = StoreHolder()
        // Read once: an option's getter costs about 400 instructions, and this runs every commit.
        let warnsOfSlowCommits = stallWarningMs > 0
        let slowCommit = Duration.milliseconds(stallWarningMs)
        let commitMetrics = StoreCommitMetrics()
        let commits = try Waker<CommitReport>(loop: loop) { reports in
            for report in reports {
                guard let timing = report.timing else { continue }
                commitMetrics.record(timing.total, commit: timing.commit, changes: timing.changes)
                guard warnsOfSlowCommits, timing.total >= slowCommit else { continue }
                logger.warning(
                    "slow commit: the changes it carries wait for it",
                    metadata: [
                        "statements ms": "\(timing.statements.wholeMicroseconds / 1000)",
                        "commit ms": "\(timing.commit.wholeMicroseconds / 1000)", "changes": "\(timing.changes)",
                    ]
                )
            }
            // A commit acknowledges many mutations and publishes their events: one write per
            // connection for all of it.
            let handle = { for report in reports { storeHolder.store?.handle(report) } }
            if let server = storeHolder.server { server.batchingOutput(handle) } else { handle() }
            storeHolder.commitPacer?.commitsLanded()
        }
        // The store holds every home's layout: only its owner may read it (SQLite gives the WAL
        // files the database's mode).
        let previousMask = umask(0o077)
        let homeStore = try HomeStore.open(
            .file(path: store),
            configuration: HomeStore.Configuration(
                retention: EventRetention(
                    maxEvents: maxEventsPerHome,
                    maxAgeMilliseconds: Int64(min(eventRetentionHours, 1_000_000)) * 3_600_000
                ),
                limits: limits.objectLimits,
                clock: clock,
                locksFileExclusively: !sharedStore
            )
        ) { report in _ = commits.send(report) }
        umask(previousMask)
        storeHolder.store = homeStore
        logger.info(
            "store loaded",
            metadata: [
                "path": "\(store)", "homes": "\(homeStore.counts.homes)",
                "accessories": "\(homeStore.counts.accessories)",
                "characteristics": "\(homeStore.counts.characteristics)",
            ]
        )
        if let token = homeStore.newOwnerToken {
            try Self.writeSecret(token, to: ownerTokenFile)
            logger.notice("new store: owner account created", metadata: ["token file": "\(ownerTokenFile)"])
        }

        let health = HealthService()
        let info = ServerInfoService(version: Self.version)
        info.commits = commitMetrics
        var registry = MethodRegistry()
        health.register(in: &registry)
        info.register(in: &registry)
        var accessories = AccessoryLinkConfiguration()
        accessories.commandTimeoutMilliseconds = UInt64(accessoryTimeout)
        accessories.maxAdvertisements = maxAdvertisedAccessories
        accessories.maxAdvertisedBytes = maxAdvertisedBytes
        let api = HomeAPI(
            store: homeStore,
            loop: loop,
            maxPendingEventsPerSubscription: maxPendingEventsPerSubscription,
            maxUnreadBytesPerConnection: maxUnreadBytes,
            maxUnreadBytesInAll: maxBufferedBytes,
            accessories: accessories,
            backupDirectory: backups
        )
        api.register(in: &registry)
        // Last: it lists the services registered before it.
        try ReflectionService(descriptorSet: ProtoDescriptors.fileDescriptorSet).register(in: &registry)
        info.addFigures = { [unowned api] in api.addFigures(to: &$0) }
        info.admits = { [unowned api] in api.admitsServerCall($0) }
        let storePath = store
        info.addMetrics = { [unowned api] out in
            api.addMetrics(to: &out)
            out.gauge(
                "homed_store_bytes",
                "The store's size on disk: its file and its WAL.",
                Self.storeBytes(at: storePath)
            )
        }
        let lag = LoopLagProbe(loop: loop)
        lag.start()
        info.lag = lag
        health.markServing(servicesIn: registry)
        // No change can be made until a restart (and reads that would show the lost one fail): say
        // so where an operator and a probe look.
        homeStore.onFailure = { failure in
            var metadata: Logger.Metadata = ["error": "\(failure)"]
            if let cause = failure.cause {
                metadata["result_code"] = "\(cause.resultCode)"
                metadata["errno"] = "\(cause.systemErrno)"
            }
            logger.error("store failed: every change is refused until a restart", metadata: metadata)
            health.markAllNotServing()
        }
        // The load's scratch memory is free now, and the start-up changes' rows (every accessory
        // marked unreachable) once they are committed: give both back to the system.
        ProcessUsage.returnFreedMemory()
        homeStore.whenCommitted(homeStore.currentTicket) { _ in ProcessUsage.returnFreedMemory() }
        // Every connection authenticates with a bearer token on its first call (health checks aside).
        let server = RPCServer(
            loop: loop,
            configuration: serverConfiguration,
            registry: registry,
            authenticator: UserAuthenticator(store: homeStore, identities: api.identities)
        )
        info.server = server
        storeHolder.server = server
        // A commit starts once the loop has handled every ready connection (the mutations of all
        // of them share it, and the writer thread does not take the loop's core mid-iteration), and
        // not before the one in flight has landed and its clients have answered (CommitPacer).
        let commitPacer = CommitPacer(store: homeStore, loop: loop) { [unowned server] task in
            server.runBeforePolling(task)
        }
        storeHolder.commitPacer = commitPacer
        homeStore.onCommitWaiting = commitPacer.commitWaiting

        let tlsContexts: [RPCServer.Door: TLSContext]?
        do {
            tlsContexts = try tls.contexts()
        } catch {
            throw StartError("cannot start TLS: \(error)")
        }
        tls.warnIfExposed(host: host, logger: logger)
        try Self.listen(server, on: .tcp(host: host, port: port), named: "\(host):\(port)", tls: tlsContexts?[.homeRPC])
        if let unixSocket {
            // Only this machine's processes reach a Unix socket, through its file's permissions: plain.
            try Self.removeStaleSocket(at: unixSocket)
            try Self.listen(server, on: .unix(path: unixSocket), named: unixSocket)
        }
        if let grpcPort {
            try Self.listen(
                server,
                on: .tcp(host: host, port: grpcPort),
                named: "\(host):\(grpcPort)",
                door: .grpc,
                tls: tlsContexts?[.grpc]
            )
        }

        var metricsEndpoint: MetricsEndpoint?
        if let metricsPort {
            let endpoint = MetricsEndpoint(loop: loop) { info.prometheusText() }
            do {
                let bound = try endpoint.listen(on: .tcp(host: metricsHost, port: metricsPort))
                logger.info("serving metrics", metadata: ["endpoint": "\(bound)"])
            } catch {
                throw StartError("cannot serve metrics on \(metricsHost):\(metricsPort): \(error)")
            }
            metricsEndpoint = endpoint
        }

        try tls.loadIdentities(into: api.identities)
        var watchers: [SignalWatcher] = []
        if tls.isEnabled {
            watchers.append(
                try SignalWatcher(signal: SIGHUP, loop: loop) {
                    tls.reload(into: server, logger: logger)
                    tls.reloadIdentities(into: api.identities, logger: logger)
                }
            )
        }
        for signal in [SIGTERM, SIGINT] {
            watchers.append(
                try SignalWatcher(signal: signal, loop: loop) {
                    if server.isShuttingDown {
                        logger.warning("second signal: stopping without waiting for calls")
                        loop.stop()
                        return
                    }
                    logger.info("signal received: draining", metadata: ["signal": "\(signal)"])
                    health.markAllNotServing()
                    health.endWatches(
                        CallStatus(code: .unavailable, message: "the server is shutting down", isRetryable: true)
                    )
                    // Change streams never end on their own: end them with a retryable status so
                    // subscribers resume elsewhere or after the restart, and the drain is not held open.
                    api.endStreams(
                        CallStatus(
                            code: .unavailable,
                            message:
                                "the server is shutting down; reconnect (subscribers resume after their last revision)",
                            isRetryable: true
                        )
                    )
                    server.beginGracefulShutdown { loop.stop() }
                }
            )
        }
        let stallWatch =
            stallWarningMs > 0
            ? LoopStallWatch(loop: loop, threshold: .milliseconds(stallWarningMs)) { stall in
                logger.warning(
                    "event loop stalled: callbacks ran without polling",
                    metadata: [
                        "milliseconds": "\(stall.busy.wholeMicroseconds / 1000)",
                        "on_cpu_milliseconds": "\(stall.onCPU.wholeMicroseconds / 1000)",
                    ]
                )
            } : nil
        loop.run()
        stallWatch?.close()
        metricsEndpoint?.close()
        lag.close()
        for watcher in watchers { watcher.close() }
        commitPacer.close()
        // A failure of these last commits is logged by onFailure, as one at run time is.
        homeStore.waitForCommits()
        commits.close()
        try loop.close()
        logger.info("stopped")
    }

    /// Bytes of the store's file and its WAL (0 for one not on disk).
    static func storeBytes(at path: String) -> UInt64 {
        [path, path + "-wal"].reduce(0) { total, file in
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.uint64Value
            return total + (size ?? 0)
        }
    }

    /// Listens, naming the endpoint when it cannot ("address already in use" alone does not say which).
    static func listen(
        _ server: RPCServer,
        on endpoint: Endpoint,
        named name: String,
        door: RPCServer.Door = .homeRPC,
        tls: TLSContext? = nil
    ) throws {
        do {
            try server.listen(on: endpoint, door: door, tls: tls)
        } catch {
            throw StartError("cannot listen on \(name): \(error.message)")
        }
    }

    /// Writes `secret` to `path` readable by its owner only: the file is created under a 077 umask,
    /// so it is never readable by others, even for a moment.
    static func writeSecret(_ secret: String, to path: String) throws {
        let previous = umask(0o077)
        defer { umask(previous) }
        // A file already there (from a deleted store) may have looser rights: start afresh.
        try? FileManager.default.removeItem(atPath: path)
        try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    /// The absolute directory backups go to: `option`, or the store's own directory. It must exist,
    /// so that a mistyped flag stops the start rather than the first backup.
    static func backupDirectory(_ option: String?, store: String) throws -> String {
        let directory =
            URL(fileURLWithPath: option ?? URL(fileURLWithPath: store).deletingLastPathComponent().path)
            .standardizedFileURL.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw StartError("--backup-directory \(directory) is not a directory")
        }
        return directory
    }

    /// A socket file left by a server that died cannot be bound again; anything else is not ours.
    static func removeStaleSocket(at path: String) throws {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return }
        guard attributes[.type] as? FileAttributeType == .typeSocket else {
            throw ValidationError("--unix-socket \(path) exists and is not a socket")
        }
        try FileManager.default.removeItem(atPath: path)
    }
}

/// Lets the commit waker reach the store and the server, which are made after the waker exists.
private final class StoreHolder {
    var store: HomeStore?
    var server: RPCServer?
    var commitPacer: CommitPacer?
}
