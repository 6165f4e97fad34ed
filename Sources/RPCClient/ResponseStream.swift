import Synchronization

/// The messages of a server-streaming call, as an `AsyncSequence` of serialized messages.
///
/// Flow control follows the consumer: the server may send at most the initial stream credit ahead of
/// what has been read, and more credit is granted as messages are taken. Iterate it once. Cancelling
/// the iterating task, or dropping the stream before its end, cancels the call on the server.
public struct ResponseStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]

    let buffer: StreamBuffer

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lifetime: StreamLifetime(buffer: buffer))
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let lifetime: StreamLifetime

        /// The next message; `nil` once the call ended with OK.
        /// - Throws: ``RPCError`` if it ended with another status.
        public mutating func next() async throws -> [UInt8]? {
            try await lifetime.buffer.next()
        }
    }
}

/// Cancels the call when the consumer lets go of the iterator before the stream ended.
final class StreamLifetime: Sendable {
    let buffer: StreamBuffer

    init(buffer: StreamBuffer) { self.buffer = buffer }

    deinit { buffer.abandon() }
}

/// Messages handed over from the loop thread to the consumer, and credit handed back.
final class StreamBuffer: Sendable {
    private struct State {
        var messages: [[UInt8]] = []
        var head = 0
        /// Set when the call ended: `nil` inside for OK.
        var end: RPCError??
        var waiter: CheckedContinuation<[UInt8]?, any Error>?
        var consumedSinceGrant: UInt32 = 0
    }

    private let state = Mutex(State())
    private let client: RPCClient
    private let handle: CallHandle

    init(client: RPCClient, handle: CallHandle) {
        self.client = client
        self.handle = handle
    }

    /// Loop thread: a message arrived.
    func deliver(_ message: [UInt8]) {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            guard let waiter = state.waiter else {
                state.messages.append(message)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        if let waiter {
            consumed()
            waiter.resume(returning: message)
        }
    }

    /// Loop thread: the call ended.
    func finish(_ error: RPCError?) {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = .some(error)
            defer { state.waiter = nil }
            return state.messages.count == state.head ? state.waiter : nil
        }
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume(returning: nil) }
    }

    /// Consumer: the next message, waiting for one if none is buffered.
    func next() async throws -> [UInt8]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enum Outcome {
                    case message([UInt8])
                    case end(RPCError?)
                    case wait
                }
                let outcome = state.withLock { state -> Outcome in
                    if state.head < state.messages.count {
                        let message = state.messages[state.head]
                        state.head += 1
                        if state.head == state.messages.count {
                            state.messages.removeAll(keepingCapacity: true)
                            state.head = 0
                        }
                        return .message(message)
                    }
                    if let end = state.end { return .end(end) }
                    state.waiter = continuation
                    return .wait
                }
                switch outcome {
                case .message(let message):
                    consumed()
                    continuation.resume(returning: message)
                case .end(let error):
                    if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: nil) }
                case .wait:
                    break
                }
            }
        } onCancel: {
            client.cancel(handle)
        }
    }

    /// Counts a message taken by the consumer and grants credit once half the window is used.
    private func consumed() {
        let window = max(1, client.initialStreamCredit / 2)
        let grant = state.withLock { state -> UInt32 in
            state.consumedSinceGrant += 1
            guard state.consumedSinceGrant >= window, state.end == nil else { return 0 }
            defer { state.consumedSinceGrant = 0 }
            return state.consumedSinceGrant
        }
        if grant > 0 { client.grantCredit(grant, for: handle) }
    }

    /// The consumer is gone: cancel the call unless it already ended.
    func abandon() {
        let ended = state.withLock { $0.end != nil }
        if !ended { client.cancel(handle) }
    }
}
