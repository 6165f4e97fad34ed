import Foundation
import TestSupport
import Testing
import UV

@Suite(.timeLimit(.minutes(1))) struct LoopStallWatchTests {
    /// A callback that keeps the loop from polling is a stall; time spent waiting in poll is not.
    @Test func countsBusyIterationsButNotWaiting() throws {
        let loop = try EventLoop()
        var reported: [Duration] = []
        let watch = LoopStallWatch(loop: loop, threshold: .milliseconds(150)) { reported.append($0) }
        let timer = LoopTimer(loop: loop)
        // An iteration that waits 300 ms in poll and then runs a quick callback: not a stall. The
        // next one spends 200 ms inside a callback: one.
        timer.start(after: .milliseconds(300)) {
            timer.start(after: .milliseconds(1)) {  // (a 0 ms timer would run in the same iteration)
                usleep(200_000)
                timer.start(after: .milliseconds(50)) { loop.stop() }
            }
        }
        loop.runForTest()
        #expect(watch.stallCount == 1)
        #expect(reported.count == 1)
        #expect(watch.longestStall >= .milliseconds(200))
        #expect(reported.first == watch.longestStall)
        watch.close()
        timer.close()
        try loop.close()
        #expect(watch.isClosed)
    }
}
