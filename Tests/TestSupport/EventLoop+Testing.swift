public import Testing
public import UV

extension EventLoop {
    /// Runs the loop until a test calls `stop()`; records an issue and stops if `timeout` passes first.
    public func runForTest(timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation) {
        let watchdog = LoopTimer(loop: self)
        var timedOut = false
        watchdog.start(after: timeout) {
            timedOut = true
            self.stop()
        }
        run()
        watchdog.close()
        if timedOut {
            Issue.record("the loop did not finish within \(timeout)", sourceLocation: sourceLocation)
        }
    }

    /// Runs the loop until `condition` holds, checking every few milliseconds.
    public func run(
        until condition: @escaping () -> Bool,
        timeout: Duration = .seconds(60),
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let poll = LoopTimer(loop: self)
        poll.start(after: .milliseconds(1), repeating: .milliseconds(2)) {
            if condition() { self.stop() }
        }
        if !condition() { runForTest(timeout: timeout, sourceLocation: sourceLocation) }
        poll.close()
    }
}
