import TestSupport
import Testing
import UV

@Suite(.timeLimit(.minutes(1))) struct BeforePollHookTests {
    /// A hook made stopped runs only between start() and stop(), and never after close().
    @Test func runsOnlyWhileStarted() throws {
        let loop = try EventLoop()
        var runs = 0
        let hook = BeforePollHook(loop: loop, running: false) { runs += 1 }
        var ticks = 0
        let ticker = LoopTimer(loop: loop)
        var runsWhenStarted = 0
        var runsWhenStopped = 0
        ticker.start(after: .milliseconds(1), repeating: .milliseconds(1)) {
            ticks += 1
            switch ticks {
            case 5:
                #expect(runs == 0, "a hook made stopped ran")
                runsWhenStarted = runs
                hook.start()
            case 10:
                hook.stop()
                runsWhenStopped = runs
            case 15:
                hook.close()
                hook.start()
            case 20:
                loop.stop()
            default:
                break
            }
        }
        loop.runForTest()
        #expect(runsWhenStopped - runsWhenStarted >= 4)
        #expect(runs == runsWhenStopped)
        ticker.close()
        try loop.close()
        #expect(hook.isClosed)
    }
}
