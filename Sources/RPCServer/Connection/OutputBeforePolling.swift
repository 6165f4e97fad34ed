import UV

/// The connections whose reads in this loop iteration produced replies, written together just
/// before the loop polls again, as Redis writes its replies before it sleeps. Writing after each
/// read woke the client once per connection instead, and served 5–10% fewer calls at 50
/// connections. Then it runs the tasks queued for that moment (``runAfterOutput(_:)``). Loop
/// thread only.
final class OutputBeforePolling {
    private let loop: EventLoop
    private var connections: [any ServedConnection] = []
    private var tasks: [() -> Void] = []
    private var isClosed = false
    /// Created on first use; runs only in iterations that hold output.
    private var hook: BeforePollHook?
    /// Whether a connection's read is being handled. Output it makes on other connections (a
    /// command forwarded to an accessory's link, an event) waits too: written at once, each such
    /// message cost a write and a wake-up of its peer, 20,000 a second when a producer wrote that
    /// many values through one accessory.
    private(set) var isReading = false

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Runs `body`, a read, with ``isReading`` set.
    func reading(_ body: () -> Void) {
        let outer = isReading
        isReading = true
        body()
        isReading = outer
    }

    /// Holds `connection`'s output (it calls ``ServedConnection/flushHeldOutput()`` later).
    func hold(_ connection: any ServedConnection) {
        startHookIfIdle()
        connections.append(connection)
    }

    /// Runs `task` once, after the held output is written, before the loop polls again.
    func runAfterOutput(_ task: @escaping () -> Void) {
        // Once the server has stopped, no poll may follow: now.
        guard !isClosed else { return task() }
        startHookIfIdle()
        tasks.append(task)
    }

    private func startHookIfIdle() {
        if hook == nil {
            // Strong: ``close()`` releases the hook, which breaks the cycle. This object, unlike the
            // server (which a service references weakly), retains without the runtime's slow path.
            hook = BeforePollHook(loop: loop, running: false) { self.flush() }
        }
        if connections.isEmpty && tasks.isEmpty { hook?.start() }
    }

    /// Writes what every held connection has, then runs the queued tasks.
    func flush() {
        // Popping, rather than iterating a copy and clearing it, keeps the lists' storage unshared
        // (clearing a shared array allocates). Output held and tasks queued meanwhile are taken too.
        repeat {
            while let connection = connections.popLast() { connection.flushHeldOutput() }
            if !tasks.isEmpty { tasks.removeFirst()() }
        } while !connections.isEmpty || !tasks.isEmpty
        hook?.stop()
    }

    /// Flushes and releases the hook (the server has stopped).
    func close() {
        isClosed = true
        flush()
        hook?.close()
        hook = nil
    }
}
