import RPCServer
import Wire

/// A server stream that queues what the client's credit does not let out yet, up to a bound: the
/// accessory links and the browser streams send through it, so a peer that stops reading costs
/// at most `limit` messages.
final class BoundedStream {
    let call: ServerCall
    private let limit: Int
    private var waiting: [[UInt8]] = []
    private var sentFromWaiting = 0

    init(_ call: ServerCall, limit: Int) {
        self.call = call
        self.limit = limit
        call.onWritable = { [weak self] in self?.drain() }
    }

    /// Sends `message` now or after what waits before it.
    /// - Returns: `false` when the bound is reached (the message is not sent).
    @discardableResult
    func send(_ message: [UInt8]) -> Bool {
        guard !call.hasEnded else { return false }
        if waiting.count == sentFromWaiting, call.send(message) { return true }
        guard waiting.count - sentFromWaiting < limit else { return false }
        // No need to ask for `onWritable`: the refused send that left the first message waiting
        // asked, and so does a drain that leaves some (asking again for each message hashed the
        // call into the connection's waiting table every time).
        waiting.append(message)
        return true
    }

    func finish(_ status: CallStatus) {
        waiting = []
        sentFromWaiting = 0
        call.finish(status)
    }

    private func drain() {
        while sentFromWaiting < waiting.count, call.isWritable {
            call.send(waiting[sentFromWaiting])
            sentFromWaiting += 1
        }
        if sentFromWaiting == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            sentFromWaiting = 0
        } else {
            call.notifyWhenWritable()
        }
    }
}
