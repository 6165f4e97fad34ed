import UV
import Wire

/// How a connection starts and ends: admitted by the server (reading starts), torn down after its
/// peer closed, drained, timed out, evicted, or closed after a farewell; and the calls it cancels
/// on the way.
extension ServerConnection {
    /// Starts reading the new connection: from the server's admission ``PacedQueue``, at once or a
    /// few loop iterations later when many peers arrived together. Nothing to do if the server's
    /// shutdown closed it meanwhile.
    func admit() {
        guard connection.state == .open else { return }
        do {
            try connection.startReading()
        } catch {
            connection.close()
        }
    }

    /// Closes the connection once its peer closed its side: from the server's teardown ``PacedQueue``,
    /// at once or a few loop iterations later when many peers left together. Nothing to do if a
    /// timeout or the server's shutdown closed it meanwhile.
    func tearDownAfterPeerClosed() {
        guard connection.state == .open else { return }
        if closing == nil, !machine.isClosed {
            do {
                try decoder.finish()
            } catch {
                server.log(connection: self, closedWith: .protocolError(error))
            }
        }
        closing = closing ?? (.peerClosed, connection.loop.now)
        cancelAllCalls()
        connection.close()
    }

    /// Starts a graceful drain of this connection.
    func drain() {
        batch { perform(machine.drainRequested(now: connection.loop.now)) }
    }

    /// Runs the connection's timeouts; also forces a close whose farewell the peer never read.
    func tick(now: UInt64) {
        if let closing {
            if now >= closing.since + server.configuration.closeGracePeriodMilliseconds { connection.close() }
            return
        }
        batch { perform(machine.timerFired(now: now)) }
    }

    /// Closes at once, dropping what the peer has not read: the server's buffers are over budget and
    /// this connection holds the most (``BufferBudget``).
    func evict() {
        closing = closing ?? (.bufferBudgetExceeded, connection.loop.now)
        cancelAllCalls()
        connection.close()
    }

    func beginClose(_ reason: CloseReason) {
        guard closing == nil else { return }
        closing = (reason, connection.loop.now)
        cancelAllCalls()
        // Write the farewell now, then close once it has left.
        flushThenClose()
    }

    private func flushThenClose() {
        if !outbound.isEmpty, connection.state == .open {
            try? connection.write(outbound)
            outbound.removeAll()
        }
        connection.closeWhenWritesFlushed()
    }

    func cancelAllCalls() {
        let open = machine.removeAllCalls()
        waitingForWritability = [:]
        for call in open {
            server.callTimers.remove(call)
            if call.countedMetadataBytes > 0 { uncountMetadata(of: call) }
            server.metrics.recordCall(methodIndex: call.methodIndex, code: .cancelled, startedAt: call.startedAt)
            call.cancel()
        }
    }
}
