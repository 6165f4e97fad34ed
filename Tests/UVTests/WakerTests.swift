import Foundation
import Synchronization
import TestSupport
import Testing
import UV

@Suite(.timeLimit(.minutes(1))) struct WakerTests {
    struct Note: Sendable, Equatable {
        var sender: Int
        var sequence: Int
    }

    @Test func deliversEveryMessageFromManyThreadsInPerSenderOrder() throws {
        let loop = try EventLoop()
        let senders = 4
        let perSender = 10_000
        var nextExpected = [Int](repeating: 0, count: senders)
        var received = 0
        var batches = 0
        var outOfOrder = 0
        let waker = try Waker<Note>(loop: loop) { notes in
            batches += 1
            for note in notes {
                if note.sequence != nextExpected[note.sender] { outOfOrder += 1 }
                nextExpected[note.sender] = note.sequence + 1
            }
            received += notes.count
            if received == senders * perSender { loop.stop() }
        }
        let refused = Atomic<Int>(0)
        for sender in 0..<senders {
            let thread = Thread {
                for sequence in 0..<perSender where !waker.send(Note(sender: sender, sequence: sequence)) {
                    refused.add(1, ordering: .relaxed)
                }
            }
            thread.start()
        }
        loop.runForTest()
        #expect(received == senders * perSender)
        #expect(outOfOrder == 0)
        #expect(refused.load(ordering: .relaxed) == 0)
        // Wake-ups merge: far fewer batches than messages.
        #expect(batches < received)
        waker.close()
        #expect(waker.send(Note(sender: 0, sequence: 0)) == false)
        try loop.close()
    }

    @Test func closeDeliversMessagesStillInTheInbox() throws {
        let loop = try EventLoop()
        var delivered: [Int] = []
        let waker = try Waker<Int>(loop: loop) { delivered += $0 }
        waker.send(1)
        waker.send(2)
        waker.close()
        #expect(delivered == [1, 2])
        try loop.close()
    }

    @Test func sendOrHandleOnTheLoopThreadHandlesAtOnceAfterWhatIsQueued() throws {
        let loop = try EventLoop()
        var delivered: [Int] = []
        let waker = try Waker<Int>(loop: loop) { delivered += $0 }
        // Queued (as from another thread), then sent on the loop thread: both handled, in order,
        // before sendOrHandle returns, with no loop iteration.
        waker.send(1)
        #expect(waker.sendOrHandle(2))
        #expect(delivered == [1, 2])
        waker.close()
        #expect(waker.sendOrHandle(3) == false)
        #expect(delivered == [1, 2])
        try loop.close()
    }

    @Test func sendOrHandleFromAnotherThreadIsHandledOnTheLoopThread() throws {
        let loop = try EventLoop()
        var delivered: [Int] = []
        var handledOnLoopThread = false
        let waker = try Waker<Int>(loop: loop) { notes in
            delivered += notes
            handledOnLoopThread = loop.isOnLoopThread
            loop.stop()
        }
        let thread = Thread { waker.sendOrHandle(7) }
        thread.start()
        loop.runForTest()
        #expect(delivered == [7])
        #expect(handledOnLoopThread)
        waker.close()
        try loop.close()
    }
}
