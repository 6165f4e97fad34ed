import HomeProto
import HomeService
import RPCServer
import UV
import Wire

/// The accessory face on the server: accessories advertising themselves (what the browser shows),
/// paired accessories attached through their links, and the commands forwarded to them. An
/// accessory is reachable exactly while its link is open. Loop thread only.
final class AccessoryLinks {
    /// One accessory's stream (Advertise or Attach) and what it is now.
    final class Link {
        enum State {
            /// In the browser, waiting for a controller to add it.
            case advertising(AccessoryDescription, setupCode: String)
            /// Paired; commands for the accessory (or those behind its bridge) go here.
            case attached(AccessoryID)
            /// Closed, replaced or unpaired: nothing more goes out.
            case ended
        }

        let stream: BoundedStream
        var state: State
        /// While advertising: the browser's `found` event for it, encoded once. Every browser stream
        /// queues this one buffer: encoded per stream, 100 streams that do not read of one connection
        /// held 100 copies of every advertisement (each up to a frame).
        var foundEvent: [UInt8] = []
        /// While advertising: its description's encoded size, counted against the browser's bytes.
        var descriptionBytes = 0

        init(_ stream: BoundedStream, _ state: State) {
            self.stream = stream
            self.state = state
        }

        var connectionID: Int { stream.call.connectionID }

        @discardableResult
        func send(_ kind: Home_V1_LinkMessage.OneOf_Kind) -> Bool {
            var message = Home_V1_LinkMessage()
            message.kind = kind
            return send(encoded: LinkEncoding.bytes(message))
        }

        /// Sends a `home.v1.LinkMessage` already encoded.
        func send(encoded message: [UInt8]) -> Bool {
            stream.send(message)
        }
    }

    /// What a command asks of the accessory.
    enum Action {
        case write(CharacteristicID, CharacteristicValue)
        case read(CharacteristicID)
        case identify
    }

    private let store: HomeStore
    private let loop: EventLoop
    let configuration: AccessoryLinkConfiguration
    private var advertised: [AccessoryID: Link] = [:]
    /// Advertisements in arrival order (the browser lists them so).
    private var advertisedOrder: [AccessoryID] = []
    /// The encoded size of every description the browser holds (their parsed form takes several
    /// times as much memory).
    private(set) var advertisedBytes = 0
    private var attached: [AccessoryID: Link] = [:]
    /// Accessories attached now.
    var attachedCount: Int { attached.count }
    /// Pairings refused for a wrong setup code, or for too many of them, for the metrics endpoint.
    private(set) var pairingRefusals: UInt64 = 0
    private var browsers: [Int: BoundedStream] = [:]
    private var nextBrowser = 0
    private let commands: ForwardedCommands
    private var attempts = PairingAttempts()
    /// Reachability to record for links that attached or ended since the loop last polled, applied
    /// together just before it polls again: thousands of accessories connecting or dropping at once
    /// then make one mutation and one hand-off to the writer, not one each (which kept the loop
    /// from polling for up to half a second at 10,000). The latest state of an accessory wins.
    private var reachability: [AccessoryID: Bool] = [:]
    private var reachabilityHook: BeforePollHook?

    init(store: HomeStore, loop: EventLoop, configuration: AccessoryLinkConfiguration) {
        self.store = store
        self.loop = loop
        self.configuration = configuration
        commands = ForwardedCommands(loop: loop, store: store)
        // Runs only while changes wait: an idle hook cost every loop iteration about 300 instructions.
        reachabilityHook = BeforePollHook(loop: loop, running: false) { [unowned self] in applyReachability() }
    }

    private func record(_ id: AccessoryID, reachable: Bool) {
        reachability[id] = reachable
        // Once draining has closed the hook, nothing waits for the next poll.
        if reachabilityHook?.isClosingOrClosed != false {
            applyReachability()
        } else {
            reachabilityHook?.start()
        }
    }

    private func applyReachability() {
        reachabilityHook?.stop()
        guard !reachability.isEmpty else { return }
        let changes = reachability
        reachability = [:]
        _ = store.write { () throws(HomeServiceError) in
            // An accessory removed meanwhile has nothing left to mark.
            for (id, reachable) in changes { try? store.setReachable(id, reachable) }
        }
    }

    // MARK: Advertising and the browser

    func advertise(_ description: AccessoryDescription, setupCode: String, on call: ServerCall) throws(APIFailure) {
        if store.linkAccessory(of: description.id) != nil {
            throw APIFailure(
                HomeServiceError(
                    .objectAlreadyAssociatedToHome,
                    "accessory \(description.id) is paired: attach with its credential, or remove it from its home first"
                ),
                object: description.id.raw,
                field: "accessory.id"
            )
        }
        if advertised[description.id] != nil {
            throw APIFailure(
                HomeServiceError(.alreadyExists, "accessory \(description.id) is advertised by another connection"),
                object: description.id.raw,
                field: "accessory.id"
            )
        }
        guard advertised.count < configuration.maxAdvertisements else {
            throw APIFailure(
                HomeServiceError(
                    .maximumObjectLimitReached,
                    "the browser holds \(configuration.maxAdvertisements) advertised accessories, the most it takes"
                )
            )
        }
        try attempt(field: "accessory") { () throws(HomeServiceError) in try store.checkAdvertisement(description) }
        var advertisedMessage = Home_V1_LinkMessage()
        advertisedMessage.advertised.accessory = LinkEncoding.description(description)
        let advertisedReply = LinkEncoding.bytes(advertisedMessage)
        // Each advertisement may be as large as a frame: a count alone would let a few peers make
        // the server hold gigabytes.
        guard advertisedBytes + advertisedReply.count <= configuration.maxAdvertisedBytes else {
            throw APIFailure(
                HomeServiceError(
                    .maximumObjectLimitReached,
                    "the browser holds \(advertisedBytes) bytes of advertised descriptions and this one's \(advertisedReply.count) would pass the most it takes, \(configuration.maxAdvertisedBytes)"
                ),
                object: description.id.raw,
                field: "accessory"
            )
        }
        let link = Link(
            BoundedStream(call, limit: configuration.maxQueuedMessages),
            .advertising(description, setupCode: setupCode)
        )
        link.descriptionBytes = advertisedReply.count
        advertisedBytes += link.descriptionBytes
        advertised[description.id] = link
        advertisedOrder.append(description.id)
        call.onCancel = { [weak self, unowned link] in self?.ended(link) }
        _ = link.send(encoded: advertisedReply)
        var event = Home_V1_BrowseEvent()
        event.found = LinkEncoding.discovered(description)
        link.foundEvent = LinkEncoding.bytes(event)
        tellBrowsers(link.foundEvent)
    }

    /// Streams the browser's events to a controller: every accessory advertised now, then changes.
    func browse(on call: ServerCall) {
        let stream = BoundedStream(call, limit: configuration.maxAdvertisements + configuration.maxQueuedMessages)
        let key = nextBrowser
        nextBrowser += 1
        browsers[key] = stream
        call.onCancel = { [weak self] in self?.browsers[key] = nil }
        for id in advertisedOrder {
            guard let link = advertised[id], case .advertising = link.state else { continue }
            stream.send(link.foundEvent)
        }
    }

    private func tellBrowsers(_ event: Home_V1_BrowseEvent) {
        guard !browsers.isEmpty else { return }
        tellBrowsers(LinkEncoding.bytes(event))
    }

    /// Queues one encoded event on every browser stream (the same buffer, not a copy each).
    private func tellBrowsers(_ bytes: [UInt8]) {
        for (key, stream) in browsers where !stream.send(bytes) {
            browsers[key] = nil
            stream.finish(
                CallStatus(
                    code: .resourceExhausted,
                    message: "the browser fell \(configuration.maxQueuedMessages) events behind: browse again"
                )
            )
        }
    }

    private func leaveBrowser(_ id: AccessoryID, _ reason: Home_V1_RemovedAccessory.Reason) {
        advertisedBytes -= advertised[id]?.descriptionBytes ?? 0
        advertised[id] = nil
        advertisedOrder.removeAll { $0 == id }
        var removed = Home_V1_RemovedAccessory()
        removed.id = ProtoEncoding.data(id)
        removed.reason = reason
        var event = Home_V1_BrowseEvent()
        event.removed = removed
        tellBrowsers(event)
    }

    // MARK: Pairing and attaching

    /// Pairs an advertised accessory into a home (inside the caller's write scope): the setup code
    /// must match, within the accessory's allowance of wrong attempts.
    /// - Returns: the accessories added, the bridge first.
    func pair(
        _ id: AccessoryID,
        setupCode: String,
        into home: HomeID,
        as account: AccountID
    ) throws(APIFailure) -> [Accessory] {
        try attempt(object: home.raw) { () throws(HomeServiceError) in try store.checkPairing(into: home, as: account) }
        guard let link = advertised[id], case .advertising(let description, let expected) = link.state else {
            if store.linkAccessory(of: id) != nil {
                throw APIFailure(
                    HomeServiceError(.objectAlreadyAssociatedToHome, "accessory \(id) is already in a home"),
                    object: id.raw,
                    field: "accessory_id"
                )
            }
            throw APIFailure(
                HomeServiceError(
                    .notFound,
                    "no accessory \(id) is advertised now (BrowseAccessories lists those that are)"
                ),
                object: id.raw,
                field: "accessory_id"
            )
        }
        let now = loop.now
        if let wait = attempts.wait(for: id, now: now) {
            pairingRefusals += 1
            throw APIFailure(
                HomeServiceError(
                    .accessoryPairingFailed,
                    "too many wrong setup codes for accessory \"\(description.name)\": the next attempt is allowed in \((wait + 999) / 1000) s"
                ),
                object: id.raw,
                field: "setup_code"
            )
        }
        guard SetupCode.matches(setupCode, expected) else {
            attempts.failed(id, now: now)
            pairingRefusals += 1
            throw APIFailure(
                HomeServiceError(.accessoryPairingFailed, "wrong setup code for accessory \"\(description.name)\""),
                object: id.raw,
                field: "setup_code"
            )
        }
        let (added, credential) = try attempt(object: id.raw, field: "accessory_id") {
            () throws(HomeServiceError) in
            try store.pairAccessory(description, to: home, as: account)
        }
        leaveBrowser(id, .paired)
        link.state = .attached(id)
        attached[id] = link
        var paired = Home_V1_Paired()
        paired.credential = credential
        link.send(.paired(paired))
        return added
    }

    /// Attaches a paired accessory that proved itself with its credential; a link it already had
    /// is replaced (the device reconnected before its old connection was seen to die). A bridge
    /// serving other accessories than it was paired with is blocked.
    /// - Returns: `false` for an unknown accessory or a wrong credential.
    func attach(
        _ id: AccessoryID,
        credential: String,
        bridging bridged: Set<AccessoryID>,
        on call: ServerCall
    ) -> Bool {
        guard store.isCredentialValid(credential, for: id) else { return false }
        if let old = attached[id] {
            end(old, failingCommandsWith: store.unreachableError(id))
            old.stream.finish(CallStatus(code: .aborted, message: "replaced by a newer Attach of this accessory"))
        }
        let link = Link(BoundedStream(call, limit: configuration.maxQueuedMessages), .attached(id))
        attached[id] = link
        call.onCancel = { [weak self, unowned link] in self?.ended(link) }
        link.send(.attached(Home_V1_Attached()))
        if let paired = store.bridgedAccessories(of: id), paired != bridged {
            _ = store.write { () throws(HomeServiceError) in try store.setBlocked(id, true) }
        }
        record(id, reachable: true)
        return true
    }

    /// A link's stream was cancelled: its connection closed, or the accessory cancelled it.
    private func ended(_ link: Link) {
        switch link.state {
        case .advertising(let description, _):
            if advertised[description.id] === link { leaveBrowser(description.id, .gone) }
        case .attached(let id):
            guard attached[id] === link else { break }
            end(link, failingCommandsWith: store.unreachableError(id))
            record(id, reachable: false)
        case .ended:
            break
        }
        link.state = .ended
    }

    private func end(_ link: Link, failingCommandsWith error: HomeServiceError) {
        if case .attached(let id) = link.state, attached[id] === link { attached[id] = nil }
        link.state = .ended
        commands.failAll(on: ObjectIdentifier(link), with: error)
    }

    /// Unpairs the links of accessories no longer in any home (after a removal committed): their
    /// credentials went with them.
    func dropRemovedAccessories() {
        for (id, link) in attached where store.linkAccessory(of: id) == nil {
            end(link, failingCommandsWith: HomeServiceError(.notFound, "the accessory was removed from its home"))
            link.send(.unpaired(Home_V1_Unpaired()))
            link.stream.finish(CallStatus.ok)
        }
    }

    /// Ends every link and browser with `status` (the server is draining).
    func endAll(_ status: CallStatus) {
        applyReachability()
        reachabilityHook?.close()
        for link in Array(advertised.values) + Array(attached.values) {
            link.state = .ended
            link.stream.finish(status)
        }
        advertised = [:]
        advertisedOrder = []
        attached = [:]
        for stream in browsers.values { stream.finish(status) }
        browsers = [:]
        commands.close()
    }

    // MARK: Commands

    /// Sends `action` to the accessory `accessory` (through its bridge's link for a bridged one) and
    /// calls `completion` with its answer, its refusal, 4/88 when no link serves it, or 8 at the
    /// deadline: the sooner of the configured timeout and `deadline` (the caller's, in loop time).
    func forward(
        _ action: Action,
        to accessory: AccessoryID,
        deadline: UInt64?,
        _ completion: @escaping ForwardedCommands.Completion
    ) {
        guard let top = store.linkAccessory(of: accessory), let link = attached[top] else {
            completion(.failure(store.unreachableError(accessory)))
            return
        }
        let now = loop.now
        var due = now + configuration.commandTimeoutMilliseconds
        // Answer 8 before the call's own deadline ends it with DEADLINE_EXCEEDED.
        if let deadline {
            due = min(
                due,
                deadline > now + 2 * ForwardedCommands.sweepMilliseconds
                    ? deadline - 2 * ForwardedCommands.sweepMilliseconds : now
            )
        }
        guard due > now else {
            let name = store.accessoryName(accessory)
            completion(.failure(HomeServiceError(.operationTimedOut, "no time was left to ask accessory \"\(name)\"")))
            return
        }
        var expectsValue = false
        if case .read = action { expectsValue = true }
        let id = commands.add(
            ForwardedCommands.Pending(
                link: ObjectIdentifier(link),
                connectionID: link.connectionID,
                accessory: accessory,
                expectsValue: expectsValue,
                deadline: due,
                completion: completion
            )
        )
        let command = LinkEncoding.command(id, for: accessory, action, timeoutMilliseconds: UInt32(clamping: due - now))
        if !link.send(encoded: command) {
            _ = commands.take(id, answeredOn: link.connectionID)
            let name = store.accessoryName(accessory)
            completion(
                .failure(HomeServiceError(.accessoryIsBusy, "accessory \"\(name)\" is not reading its commands"))
            )
        }
    }

    /// An accessory's answer to command `id`, on the connection it came through.
    func answer(
        _ id: UInt64,
        hapStatus: Int32,
        value: CharacteristicValue?,
        on connectionID: Int
    ) throws(APIFailure) {
        guard let command = commands.take(id, answeredOn: connectionID) else {
            throw APIFailure(
                HomeServiceError(
                    .notFound,
                    "command \(id) is not waiting for an answer from this connection (answered, timed out, or never sent here)"
                ),
                field: "command_id"
            )
        }
        guard hapStatus == 0 else {
            command.completion(.failure(HAPStatus.error(for: hapStatus, accessory: commands.accessoryName(command))))
            return
        }
        if command.expectsValue && value == nil {
            let error = HomeServiceError(
                .accessorySentInvalidResponse,
                "accessory \"\(commands.accessoryName(command))\" answered a read without a value"
            )
            command.completion(.failure(error))
            throw APIFailure(error, field: "value")
        }
        command.completion(.success(value))
    }

    /// Whether the top-level accessory `id` is attached through connection `connectionID`.
    func isAttached(_ id: AccessoryID, on connectionID: Int) -> Bool {
        attached[id]?.connectionID == connectionID
    }
}

/// The accessory face's timeouts and bounds (homed's flags set them).
public struct AccessoryLinkConfiguration: Sendable {
    /// How long a forwarded command waits for the accessory (less when the call's deadline is
    /// sooner).
    public var commandTimeoutMilliseconds: UInt64 = 10_000
    /// Accessories the browser holds at once; more advertisements are refused.
    public var maxAdvertisements = 1024
    /// Bytes of descriptions (encoded) the browser holds at once; more advertisements are refused.
    public var maxAdvertisedBytes = 64 << 20
    /// Messages that may wait for one accessory's or browser's credit.
    public var maxQueuedMessages = 1024

    public init() {}
}

/// HAP setup codes: eight digits shown as "XXX-XX-XXX".
enum SetupCode {
    /// Codes HAP forbids for being guessable.
    static let forbidden: Set<String> = [
        "00000000", "11111111", "22222222", "33333333", "44444444", "55555555", "66666666", "77777777",
        "88888888", "99999999", "12345678", "87654321",
    ]

    /// The code's digits, or a failure for a code that is malformed or forbidden.
    static func digits(_ code: String, field: String) throws(APIFailure) -> String {
        let bytes = Array(code.utf8)
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard bytes.count == 10, bytes[3] == UInt8(ascii: "-"), bytes[6] == UInt8(ascii: "-"),
            bytes.enumerated().allSatisfy({ $0.offset == 3 || $0.offset == 6 || isDigit($0.element) })
        else {
            throw APIFailure.invalid(field, "a setup code is eight digits written XXX-XX-XXX, e.g. 031-45-154")
        }
        let digits = String(code.filter(\.isNumber))
        guard !forbidden.contains(digits) else {
            throw APIFailure.invalid(field, "setup code \(code) is too easy to guess; HAP forbids it")
        }
        return digits
    }

    /// Compares a tried code with the advertised one's digits, in time independent of where they differ.
    static func matches(_ tried: String, _ expectedDigits: String) -> Bool {
        let given = tried.utf8.filter { $0 != UInt8(ascii: "-") }
        let expected = Array(expectedDigits.utf8)
        guard given.count == expected.count else { return false }
        var difference: UInt8 = 0
        for index in given.indices { difference |= given[index] ^ expected[index] }
        return difference == 0
    }
}
