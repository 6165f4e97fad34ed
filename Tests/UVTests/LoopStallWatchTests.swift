import Foundation
import TestSupport
import Testing
import UV

@Suite(.timeLimit(.minutes(1))) struct LoopStallWatchTests {
    /// A callback that keeps the loop from polling is a stall; time spent waiting in poll is not.
    @Test func countsBusyIterationsButNotWaiting() throws {
        let loop = try EventLoop()
        var reported: [LoopStall] = []
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
        #expect(try #require(watch.longestStall).busy >= .milliseconds(200))
        #expect(reported.first == watch.longestStall)
        // It slept: the stall was not the thread's work, and says so.
        #expect(try #require(reported.first).onCPU < .milliseconds(100))
        watch.close()
        timer.close()
        try loop.close()
        #expect(watch.isClosed)
    }

    /// A callback that computes for 200 ms stalls the loop on the CPU: the stall says so.
    @Test func tellsWorkFromWaiting() throws {
        let loop = try EventLoop()
        var reported: [LoopStall] = []
        let watch = LoopStallWatch(loop: loop, threshold: .milliseconds(150)) { reported.append($0) }
        let timer = LoopTimer(loop: loop)
        timer.start(after: .milliseconds(1)) {
            let start = ContinuousClock.now
            var spins = 0
            while start.duration(to: .now) < .milliseconds(200) { spins &+= 1 }
            timer.start(after: .milliseconds(50)) { loop.stop() }
        }
        loop.runForTest()
        let stall = try #require(reported.first)
        #expect(reported.count == 1)
        #expect(stall.busy >= .milliseconds(200))
        // Most of it on the CPU; a busy machine may take a core away for part of it.
        #expect(stall.onCPU >= .milliseconds(50) && stall.onCPU <= stall.busy, "\(stall)")
        watch.close()
        timer.close()
        try loop.close()
    }
}
