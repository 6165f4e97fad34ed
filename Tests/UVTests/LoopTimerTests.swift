import Foundation
import TestSupport
import Testing
import UV

@Suite(.timeLimit(.minutes(1))) struct LoopTimerTests {
    @Test func oneShotTimerFiresOnceAfterItsDelay() throws {
        let loop = try EventLoop()
        let timer = LoopTimer(loop: loop)
        let start = loop.now
        var firedAt: [UInt64] = []
        timer.start(after: .milliseconds(30)) { firedAt.append(loop.now) }
        let stopper = LoopTimer(loop: loop)
        stopper.start(after: .milliseconds(120)) { loop.stop() }
        loop.runForTest()
        #expect(firedAt.count == 1)
        #expect((firedAt.first ?? 0) - start >= 30)
        #expect(!timer.isActive)
        timer.close()
        stopper.close()
        try loop.close()
    }

    @Test func repeatingTimerFiresUntilStopped() throws {
        let loop = try EventLoop()
        let timer = LoopTimer(loop: loop)
        var fired = 0
        timer.start(after: .milliseconds(1), repeating: .milliseconds(2)) {
            fired += 1
            if fired == 5 {
                timer.stop()
                loop.stop()
            }
        }
        loop.runForTest()
        #expect(fired == 5)
        #expect(!timer.isActive)
        timer.close()
        try loop.close()
        #expect(timer.isClosed)
    }

    @Test func restartingReplacesTheHandler() throws {
        let loop = try EventLoop()
        let timer = LoopTimer(loop: loop)
        var calls: [String] = []
        timer.start(after: .milliseconds(50)) { calls.append("first") }
        timer.start(after: .milliseconds(1)) {
            calls.append("second")
            loop.stop()
        }
        loop.runForTest()
        #expect(calls == ["second"])
        timer.close()
        try loop.close()
    }

    @Test(arguments: [
        (Duration.zero, UInt64(0)), (.nanoseconds(1), 1), (.milliseconds(5), 5), (.microseconds(5_001), 6),
        (.seconds(2), 2000), (.seconds(-1), 0),
    ])
    func durationsRoundUpToWholeMilliseconds(duration: Duration, expected: UInt64) throws {
        // Observed through a timer: it must not fire before the rounded-up delay.
        let loop = try EventLoop()
        let timer = LoopTimer(loop: loop)
        let start = loop.now
        var elapsed: UInt64 = 0
        timer.start(after: duration) {
            elapsed = loop.now - start
            loop.stop()
        }
        loop.runForTest()
        #expect(elapsed >= expected)
        timer.close()
        try loop.close()
    }
}

@Suite(.timeLimit(.minutes(1))) struct SignalWatcherTests {
    @Test func signalArrivesOnTheLoop() throws {
        let loop = try EventLoop()
        var received = 0
        let watcher = try SignalWatcher(signal: SIGUSR1, loop: loop) {
            received += 1
            loop.stop()
        }
        let timer = LoopTimer(loop: loop)
        timer.start(after: .milliseconds(1)) { kill(getpid(), SIGUSR1) }
        loop.runForTest()
        #expect(received == 1)
        #expect(watcher.signal == SIGUSR1)
        watcher.close()
        timer.close()
        try loop.close()
    }
}
