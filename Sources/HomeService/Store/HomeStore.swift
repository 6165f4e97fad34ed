#if canImport(Glibc)
import Glibc
#endif

/// The home domain in memory, with durable storage behind it: every account, home and object, the
/// characteristic cache and each home's change log.
///
/// One thread owns a store (the event loop's): every call happens there, without locks. A mutating
/// call checks its caller's rights and the HomeKit rules first and changes nothing if one fails; then
/// it updates memory, records typed change events under the home's next revision, and queues the
/// changed rows to the writer thread. Answer the caller from ``afterCommit(_:)``: a change is
/// acknowledged only once it is durable. Reads are answered from memory at once.
///
/// ```swift
/// let store = try HomeStore.open(.file(path: "homed.sqlite"))
/// let home = try store.addHome(named: "Home", as: owner)
/// let room = try store.addRoom(named: "Kitchen", to: home.id, as: owner)
/// store.afterCommit { failure in reply(failure == nil ? .ok(room) : .error(failure!)) }
/// ```
public final class HomeStore {
    /// Where committed rows live.
    public enum Location {
        /// An SQLite file (created on first open).
        case file(path: String)
        /// Memory that outlives the store object, so it can be reopened (tests, throwaway servers).
        case memory(InMemoryStorage)
    }

    public struct Configuration: Sendable {
        public var retention: EventRetention
        /// How many objects an account and a home may hold.
        public var limits: ObjectLimits
        /// Milliseconds since the Unix epoch: event times, execution dates, trigger checks.
        public var clock: @Sendable () -> Int64
        /// Whether a file store keeps its file locked from the end of the load until it closes
        /// (SQLite's exclusive locking mode): each commit then makes no lock calls (six `fcntl`
        /// before), and no other process or connection can open the file meanwhile, so a backup
        /// goes through ``writeCopy(to:by:then:)``. The server sets it; it is off by default so that
        /// tools and tests may open the file beside a store.
        public var locksFileExclusively: Bool

        public init(
            retention: EventRetention = EventRetention(),
            limits: ObjectLimits = ObjectLimits(),
            clock: @escaping @Sendable () -> Int64 = wallClock,
            locksFileExclusively: Bool = false
        ) {
            self.retention = retention
            self.limits = limits
            self.clock = clock
            self.locksFileExclusively = locksFileExclusively
        }
    }

    // MARK: State (the owning thread only)
    //
    // The tables are internal: callers outside the domain read through the checked queries
    // (HomeStore+Queries.swift), which apply the same membership rules as the mutations.

    var accounts: [AccountID: Account] = [:]
    @usableFromInline var tokens = TokenBook()
    var homes: [HomeID: Home] = [:]
    var rooms = IDTable<IDKind.Room, Room>()
    var zones = IDTable<IDKind.Zone, Zone>()
    var accessories = IDTable<IDKind.Accessory, Accessory>()
    var services = IDTable<IDKind.Service, Service>()
    var characteristics = IDTable<IDKind.Characteristic, Characteristic>()
    var serviceGroups = IDTable<IDKind.ServiceGroup, ServiceGroup>()
    var actionSets = IDTable<IDKind.ActionSet, ActionSet>()
    var triggers = IDTable<IDKind.Trigger, TimerTrigger>()
    /// The action set each action belongs to (an action is in at most one).
    var actionOwners: [ActionID: ActionSetID] = [:]
    /// Every characteristic's last value.
    public internal(set) var cache = CharacteristicCache()
    /// Each home's retained changes.
    var logs: [HomeID: RevisionLog<HomeChange>] = [:]
    /// The homes each account is a member of (the inverse of `Home.members`), so listing an
    /// account's homes does not scan every home on the server.
    var homeIDsByMember: [AccountID: Set<HomeID>] = [:] {
        didSet { membershipVersion &+= 1 }
    }
    /// Counts changes to `homeIDsByMember`: a ``MembershipMemo`` holds while it is unchanged.
    @usableFromInline private(set) var membershipVersion: UInt64 = 0
    /// Counts changes that can change what ``checkWrite(_:_:as:)`` decides (every row touched but
    /// ``RecordKey/canChangeWriteChecks`` rows): a ``CheckedWrite`` stands while it is unchanged.
    private(set) var writeCheckVersion: UInt64 = 0
    /// Each home's namespace: who holds each name, by comparison key.
    var names: [HomeID: HomeNamespace] = [:]
    /// Accounts that enabled notifications per characteristic. Not persisted: like HomeKit's, it
    /// lasts while the accessory stays reachable.
    var notificationsEnabled: [CharacteristicID: Set<AccountID>] = [:]
    /// Accessories marked unreachable at start-up whose row and event are not recorded yet, the
    /// next one last; and those whose link came or went since, whose own changes supersede it.
    var unrecordedUnreachable: [AccessoryID] = []
    var linkedSinceStartUp: Set<AccessoryID> = []
    var nextSequence: Int64 = 1
    /// Remembered outcomes of mutations sent with an idempotency key (HomeStore+Idempotency.swift).
    var idempotency = IdempotencyRecords()
    /// One copy of each type UUID, however many objects carry it.
    var strings = StringInterner()
    /// One copy of each characteristic type, properties and metadata combination.
    var characteristicKinds = CharacteristicKinds()

    let configuration: Configuration

    // MARK: Commit plumbing

    let writer: StoreWriter
    /// Rows touched since the batch last took them, in first-touch order: by the mutation in
    /// progress, and with ``onCommitWaiting`` set by every mutation of the batch (see
    /// ``appendTouchedRows()``).
    private var dirty: [RecordKey] = []
    private var dirtySet: Set<RecordKey> = []
    private var pendingChanges: [HomeChange] = []
    /// The row changes of the mutations not yet handed to the writer, numbered ``nextBatch``. With
    /// ``onCommitWaiting`` set they wait here for ``startQueuedCommits()`` and go as one batch:
    /// handing each mutation over took the writer's lock and a list of its own.
    private var batch: [StoreChange] = []
    /// Events logged in each home's table up to here; below it they are trimmed.
    var trimmedThrough: [HomeID: UInt64] = [:]
    /// A home found to need no trim of its event rows since the last commit landed: its log moves
    /// only when commits land (``handle(_:)``), so the mutations in between skip the check's two
    /// lookups. (A trim found later is only later: the table keeps at most a step more.)
    private var homeWithNoTrimDue: HomeID?
    private var lastSubmitted: UInt64 = 0
    private var lastCommitted: UInt64 = 0
    /// Every batch up to this one is durable (after a failure, `lastCommitted` runs ahead of it).
    private var durableThrough: UInt64 = 0
    private var waiting = FrontDroppingArray<CommitWaiter>()
    private var unpublished = FrontDroppingArray<(batch: UInt64, change: HomeChange)>()
    /// The failed commit's error, once one failed (the store then takes no change until reopened).
    public private(set) var failure: StoreError?
    /// Who waits for each copy of the store the writer is making (``writeCopy(to:by:then:)``).
    var copyWaiters: [UInt64: (Result<Int64, HomeServiceError>) -> Void] = [:]
    var lastCopyNumber: UInt64 = 0
    /// How many mutations (and write scopes) are open; the outermost submits.
    var mutationDepth = 0
    /// The session of the write scope in progress.
    private var currentSession: SessionID?

    /// Called with every change once it is durable, in revision order per home.
    public var changeObserver: ((HomeChange) -> Void)?
    /// Called once, with the error, when a commit fails and the store stops taking changes (a server
    /// says so in its log and its health check: only a restart brings changes back).
    public var onFailure: ((StoreError) -> Void)?

    /// When set, a mutation's batch waits for ``startQueuedCommits()`` instead of waking the writer
    /// thread at once: this is called the first time a batch waits, and the server starts the
    /// commit once its loop has handled everything ready (just before it polls). Woken at once, a
    /// writer sharing the loop's core took the core in the middle of the loop's work (17% of the
    /// loop's time in task switches with 20,000 forwarded writes a second), and every mutation
    /// that found the writer idle paid a wake-up.
    public var onCommitWaiting: (() -> Void)?
    /// Whether ``onCommitWaiting`` was called for changes not yet submitted.
    private var isCommitWaiting = false

    /// The owner's token, when this open created the owner account (a new store); shown only here.
    public internal(set) var newOwnerToken: String?

    /// The system's real-time clock, in milliseconds since the Unix epoch.
    public static let wallClock: @Sendable () -> Int64 = {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    init(backend: any StoreBackend, configuration: Configuration, onCommit: @escaping @Sendable (CommitReport) -> Void)
    {
        self.configuration = configuration
        self.writer = StoreWriter(backend: backend, onCommit: onCommit)
    }

    /// Opens the store at `location`: loads everything into memory and checks it; on a new store,
    /// creates the owner account (its token is in ``newOwnerToken``).
    /// - Parameter onCommit: called on the writer thread after each commit. Pass the report to
    ///   ``handle(_:)`` on this store's thread (through a loop waker); or leave it out and call
    ///   ``waitForCommits()``.
    public static func open(
        _ location: Location,
        configuration: Configuration = Configuration(),
        onCommit: @escaping @Sendable (CommitReport) -> Void = { _ in }
    ) throws(StoreError) -> HomeStore {
        let backend: any StoreBackend
        var integrityCheck: BackgroundWork<Void>?
        switch location {
        case .file(let path):
            backend = try SQLiteStorage(path: path)
            integrityCheck = BackgroundWork { () throws(StoreError) in try SQLiteStorage.checkIntegrity(of: path) }
        case .memory(let storage): backend = storage
        }
        let store = HomeStore(backend: backend, configuration: configuration, onCommit: onCommit)
        let loaded = Result { () throws(StoreError) in try StoreLoader(store: store, backend: backend).load() }
        // A damaged file is reported as such, whatever the load made of its rows.
        try integrityCheck?.value()
        try loaded.get()
        // The load's other connections are closed: the writer's keeps the file to itself from here.
        if configuration.locksFileExclusively, let file = backend as? SQLiteStorage { try file.holdExclusively() }
        if !store.accounts.values.contains(where: \.isOwner) {
            store.newOwnerToken = store.createOwner()
        }
        // Idempotency keys past their window are forgotten (and deleted) at start-up too, and so are
        // kinds that lost their last characteristic in a commit that did not delete them.
        store.mutationDepth += 1
        for account in store.idempotency.accounts {
            store.forgetIdempotencyKeys(of: account)
        }
        for number in store.characteristicKinds.removeUnused() { store.touch(.characteristicKind(number: number)) }
        store.endMutation()
        return store
    }

    var now: Int64 { configuration.clock() }
    var limits: ObjectLimits { configuration.limits }

    // MARK: Durability

    /// Runs `body`, whose mutations become one commit, and says when that commit is durable:
    /// acknowledge a change only from ``whenCommitted(_:_:)`` with the returned ticket.
    ///
    /// Each mutation inside is all-or-nothing (it checks everything before it changes anything);
    /// the scope groups them into one batch and one ticket. When `body` throws, the mutations that
    /// succeeded before the throw are still committed, and the ticket covers them.
    /// - Parameter session: the connection (or other channel) the change comes through; its events
    ///   carry it, so a subscriber can leave out its own session's changes.
    public func write<T, Failure: Error>(
        from session: SessionID? = nil,
        _ body: () throws(Failure) -> T
    ) -> (result: Result<T, Failure>, ticket: CommitTicket) {
        let outerSession = currentSession
        currentSession = session ?? outerSession
        mutationDepth += 1
        let result = Result<T, Failure> { () throws(Failure) -> T in try body() }
        currentSession = outerSession
        endMutation()
        return (result, currentTicket)
    }

    /// Calls `callback` once the batch `ticket` names, and every one before it, is committed, with
    /// `nil`, or with the failure that stopped the store. Calls it at once when that has happened.
    public func whenCommitted(_ ticket: CommitTicket, _ callback: @escaping (StoreError?) -> Void) {
        whenCommitted(ticket, .callback(callback))
    }

    /// ``whenCommitted(_:_:)`` for an object that is told, without a closure to allocate for it.
    public func whenCommitted(_ ticket: CommitTicket, notify observer: any CommitObserver) {
        whenCommitted(ticket, .observer(observer))
    }

    private func whenCommitted(_ ticket: CommitTicket, _ notify: CommitWaiter.Notify) {
        if ticket.batch <= durableThrough {
            notify(nil)
        } else if let failure {
            notify(failure)
        } else {
            waiting.append(CommitWaiter(batch: ticket.batch, notify: notify))
        }
    }

    /// The ticket of every change made so far, including those of a write scope still open (a barrier:
    /// for shutdown and tools).
    public var currentTicket: CommitTicket {
        CommitTicket(batch: hasUnsubmittedChanges ? nextBatch : lastSubmitted)
    }

    /// The batch the changes not yet submitted will go in: the writer numbers batches in order.
    var nextBatch: UInt64 { lastSubmitted + 1 }

    /// The room the buffers that carry changes to the writer and to their logs hold (for tests).
    var changeBufferCapacities: [Int] {
        [
            dirty.capacity, dirtySet.capacity, pendingChanges.capacity, batch.capacity, unpublished.capacity,
            waiting.capacity,
        ]
    }

    private var hasUnsubmittedChanges: Bool { !dirty.isEmpty || !pendingChanges.isEmpty || !batch.isEmpty }

    /// Calls `callback` once every change made so far is committed, with `nil`, or with the failure
    /// that stopped it. Calls it at once when nothing is pending.
    public func afterCommit(_ callback: @escaping (StoreError?) -> Void) {
        whenCommitted(currentTicket, callback)
    }

    /// Takes a report from the writer thread: runs the callbacks, then publishes the changes it
    /// covers: only now do they enter their home's log, so replay and live delivery both see
    /// committed changes only, and a revision handed out is never reused for another change.
    /// Call on this store's thread.
    public func handle(_ report: CommitReport) {
        if let copy = report.finishedCopy { copyWaiters.removeValue(forKey: copy.number)?(copy.result) }
        guard report.committedThrough > lastCommitted || report.failure != nil else { return }
        lastCommitted = max(lastCommitted, report.committedThrough)
        if let reportFailure = report.failure, failure == nil {
            failure = reportFailure
            onFailure?(reportFailure)
        }
        let durable = report.failure == nil
        if durable { durableThrough = max(durableThrough, report.committedThrough) }
        homeWithNoTrimDue = nil
        while let (_, change) = unpublished.popFirst(if: { $0.batch <= report.committedThrough }) {
            guard durable else { continue }
            _ = logs.mutateValue(forKey: change.home) { $0.append(change, at: UInt64(max(0, change.time))) }
            changeObserver?(change)
        }
        while let waiter = waiting.popFirst(if: { $0.batch <= report.committedThrough }) {
            waiter.notify(report.failure)
        }
    }

    /// Who waits for a batch's commit. A struct, not a tuple: a closure inside a tuple that a
    /// generic container holds is stored reabstracted, an allocation more per waiter, and
    /// destroyed through the tuple's generic value witness.
    private struct CommitWaiter {
        enum Notify {
            case callback((StoreError?) -> Void)
            case observer(any CommitObserver)

            func callAsFunction(_ failure: StoreError?) {
                switch self {
                case .callback(let callback): callback(failure)
                case .observer(let observer): observer.committed(failure)
                }
            }
        }

        let batch: UInt64
        let notify: Notify
    }

    /// Starts the commit of the batches that wait for it (``onCommitWaiting``).
    public func startQueuedCommits() {
        isCommitWaiting = false
        submitBatch(startingCommit: true)
    }

    /// Blocks until everything queued is committed, then handles the report. For tools, tests and
    /// shutdown; a server passes reports through its loop instead.
    @discardableResult
    public func waitForCommits() -> StoreError? {
        submitBatch(startingCommit: false)
        handle(writer.waitForCommits())
        return failure
    }

    /// Whether a batch handed to the writer has not been reported committed yet (``handle(_:)``).
    public var hasCommitInFlight: Bool { lastSubmitted > lastCommitted }

    /// Whether the store still accepts changes (a failed commit stops it until reopened).
    public var isAcceptingChanges: Bool { failure == nil }

    // MARK: Recording a mutation

    /// Starts a mutation: every public mutation calls this first and defers ``endMutation()``, so the
    /// batch it makes is submitted however it returns or throws.
    /// - Throws: 52 once a commit has failed.
    func beginMutation() throws(HomeServiceError) {
        try checkAcceptingChanges()
        mutationDepth += 1
    }

    /// Ends a mutation; the outermost one submits everything the scope changed as one batch.
    func endMutation() {
        mutationDepth -= 1
        if mutationDepth == 0 { submitPending() }
    }

    /// Refuses mutations once a commit has failed: memory may be ahead of the file, and only a
    /// reopen brings them back in line.
    func checkAcceptingChanges() throws(HomeServiceError) {
        if let failure { throw HomeServiceError(.genericError, failure.description) }
    }

    /// Marks a row for writing (or deleting, if its object is gone when its batch goes to the writer).
    func touch(_ key: RecordKey) {
        if key.canChangeWriteChecks { writeCheckVersion &+= 1 }
        if dirtySet.insert(key).inserted { dirty.append(key) }
    }

    /// Records `event` as the home's next revision; it enters the home's log once committed (see
    /// ``handle(_:)``). The revision is not written to the home's row: the event table always keeps
    /// each home's latest event, and load takes the revision from it.
    /// `event` is consumed: the change takes it without a copy (one retained and released its
    /// name's and value's storage per event).
    func emit(_ event: consuming ChangeEvent, in homeID: HomeID, by initiator: Initiator) {
        // Counted in place, in one lookup: reading the home copied it (twice per event, each copy
        // retaining all its collections).
        guard let revision = homes.mutateValue(forKey: homeID, { $0.advanceRevision() }) else { return }
        let time = now
        // Made in the append: bound to a constant first, the new change was retained for the list
        // and released after it, a locked operation right after its fields were written (perf
        // put 2.6% of a loaded loop's time on that one retain).
        pendingChanges.append(
            HomeChange(
                home: homeID,
                revision: revision,
                time: time,
                initiator: initiator,
                event: event,
                session: currentSession
            )
        )
    }

    /// Gives `account` a role in the home (or with `nil` takes it away), keeping the inverse index.
    func setRole(_ role: HomeRole?, of account: AccountID, in homeID: HomeID) {
        homes[homeID]?.members[account] = role
        if role == nil {
            homeIDsByMember[account]?.remove(homeID)
        } else {
            homeIDsByMember[account, default: []].insert(homeID)
        }
        touch(.member(homeID, account))
    }

    func newLog(after revision: UInt64) -> RevisionLog<HomeChange> {
        RevisionLog(
            maxEntries: configuration.retention.maxEvents,
            maxAgeMilliseconds: UInt64(configuration.retention.maxAgeMilliseconds),
            startingAfter: revision
        )
    }

    func nextSequenceNumber() -> Int64 {
        defer { nextSequence += 1 }
        return nextSequence
    }

    /// Turns the new events into row changes of the batch (``endMutation()`` calls it), and hands
    /// the batch to the writer at once, with the touched rows, unless ``onCommitWaiting`` is set.
    private func submitPending() {
        guard !dirty.isEmpty || !pendingChanges.isEmpty else { return }
        let number = nextBatch
        // A mutation's events are nearly always of one home: a set only when there are more.
        var eventHome: HomeID?
        var otherHomes: Set<HomeID> = []
        // Consumed: the change moves into the batch, and only the pending list's copy is retained
        // (borrowed, it was retained and released once more for each list).
        func take(_ change: consuming HomeChange) {
            let home = change.home
            unpublished.append((number, copy change))
            // Even a removed home's: the removal's `.removedHomeEvents` row change, which the batch
            // takes after its events, trims every event row of the home in the same commit.
            batch.append(.event(change))
            if eventHome == nil {
                eventHome = home
            } else if eventHome != home {
                otherHomes.insert(home)
            }
        }
        if pendingChanges.count == 1 {
            // The usual mutation's one event, moved out: emptying the array by `removeAll` went
            // through its generic range replacement (170 instructions) to release a copy.
            take(pendingChanges.removeLast())
        } else {
            // One pass (each pass retained and released the array and every change).
            for change in pendingChanges { take(change) }
            pendingChanges.removeAllKeepingModestCapacity()
        }
        if let eventHome { trimEvents(of: eventHome) }
        // Iterating even an empty set retained and released its storage.
        if !otherHomes.isEmpty { for homeID in otherHomes { trimEvents(of: homeID) } }
        guard let onCommitWaiting else {
            submitBatch(startingCommit: true)
            return
        }
        if !isCommitWaiting {
            isCommitWaiting = true
            onCommitWaiting()
        }
    }

    /// Adds a trim of the home's event rows to the batch once a step of them is past the retention.
    /// Trims what the log no longer retains, but keeps the latest event: it carries the revision.
    /// In steps of a 16th of the retention: a DELETE per mutation rewrote the table's first page in
    /// every commit; a trim writes 6 to 10 pages of the WAL (the first leaves, their parent, the free
    /// list) for 10 batches or 40, and at 64ths that was a third of the pages of commits of 16 writes.
    /// The table holds at most a step more than the log; a reopen trims the log anyway.
    private func trimEvents(of homeID: HomeID) {
        if homeWithNoTrimDue == homeID { return }
        // Read in place: `logs[homeID]` copied the log, retaining and releasing its storage.
        let revisions = logs.mutateValue(forKey: homeID) { ($0.currentRevision, $0.oldestResumableRevision) }
        guard let (current, oldestResumable) = revisions, current > 0 else { return }
        let through = min(oldestResumable, current - 1)
        let trimStep = UInt64(max(1, configuration.retention.maxEvents / 16))
        guard through >= trimmedThrough[homeID, default: 0] + trimStep else {
            homeWithNoTrimDue = homeID
            return
        }
        trimmedThrough[homeID] = through
        batch.append(.trimEvents(home: homeID.raw.bytes, throughRevision: Int64(through)))
    }

    /// Adds a row change for each touched row, built from the row's state now, and forgets the
    /// touches. Called as the batch goes to the writer, so a row that many mutations of the batch
    /// touched (an action set whose actions a script updates one call at a time, 24 times in a
    /// commit of a loaded server) is encoded and written once, as it is after the last of them:
    /// the batch commits whole or not at all, and no table refers to another, so only the final
    /// state of each row matters.
    private func appendTouchedRows() {
        guard !dirty.isEmpty else { return }
        for key in dirty { batch.append(storeChange(for: key)) }
        dirty.removeAllKeepingModestCapacity()
        dirtySet.removeAllKeepingModestCapacity()
    }

    /// Hands the batch to the writer, which numbers it ``nextBatch``, as tickets and idempotency
    /// records already named it.
    private func submitBatch(startingCommit: Bool) {
        appendTouchedRows()
        // The batch writes the open rows of idempotency records as they are now.
        idempotency.closeOpenRows()
        guard !batch.isEmpty else {
            if startingCommit { writer.startCommit() }
            return
        }
        let expected = nextBatch
        // Handed over, not copied: the writer usually takes the array as it is (copying its
        // changes retained every row's values again), and the next batch starts a buffer of its own.
        let submitted = batch
        batch = []
        batch.reserveCapacity(min(submitted.count, retainedBufferCapacity))
        lastSubmitted = writer.submit(submitted, startingCommit: startingCommit)
        precondition(lastSubmitted == expected, "the store is the writer's only submitter")
    }
}

/// The connection (or other channel) changes come through, so that a subscriber can tell its own
/// changes from everyone else's.
public struct SessionID: Hashable, Sendable, CustomStringConvertible {
    public let raw: UInt64
    public init(_ raw: UInt64) { self.raw = raw }
    public var description: String { "session \(raw)" }
}
