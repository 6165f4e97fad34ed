import CLibUV

/// Every C callback handed to libuv. Each recovers its Swift object from the handle's `data` (see
/// ``HandleOwner``) and forwards to one method; none holds logic of its own.
enum Trampolines {
    /// uv_close_cb for every handle type.
    static let closed: uv_close_cb = { handle in
        guard let handle else { return }
        (handle.owner as! any HandleOwner).handleDidClose()
    }

    /// uv_walk_cb used by ``EventLoop/close()`` to close what is still open.
    static let closeWalked: uv_walk_cb = { handle, _ in
        guard let handle, uv_is_closing(handle) == 0, handle.pointee.data != nil else { return }
        (handle.owner as! any HandleOwner).close()
    }

    /// uv_alloc_cb: every read of a loop goes into the loop's one read buffer.
    static let allocate: uv_alloc_cb = { handle, _, buffer in
        guard let handle, let buffer else { return }
        buffer.pointee = handle.withOwner(as: Connection.self) { owner in
            uv_buf_init(owner.loop.readBuffer.assumingMemoryBound(to: CChar.self), UInt32(EventLoop.readBufferSize))
        }
    }

    static let read: uv_read_cb = { stream, count, buffer in
        guard let stream else { return }
        stream.asHandle.withOwner(as: Connection.self) { $0.readCompleted(count: count, buffer: buffer?.pointee.base) }
    }

    static let written: uv_write_cb = { request, status in
        guard let request else { return }
        let byteCount = WriteRequest.byteCount(of: request)
        request.pointee.handle.asHandle.withOwner(as: Connection.self) { connection in
            WriteRequest.free(request)
            connection.writeCompleted(byteCount: byteCount, status: status)
        }
    }

    /// uv_shutdown_cb: the half-close of ``Connection/closeWhenWritesFlushed()`` is done (or was
    /// cancelled by the close); the connection's linger timer or the peer's end of input closes it.
    static let shutDown: uv_shutdown_cb = { request, _ in
        request?.deallocate()
    }

    static let connected: uv_connect_cb = { request, status in
        guard let request else { return }
        ConnectRequest.complete(request, status: status)
    }

    static let connectionArrived: uv_connection_cb = { server, status in
        guard let server else { return }
        unsafeDowncast(server.asHandle.owner, to: Listener.self).connectionArrived(status: status)
    }

    static let timerFired: uv_timer_cb = { timer in
        guard let timer else { return }
        timer.asHandle.withOwner(as: LoopTimer.self) { $0.fire() }
    }

    static let aboutToPoll: uv_prepare_cb = { prepare in
        guard let prepare else { return }
        prepare.asHandle.withOwner(as: BeforePollHook.self) { $0.run() }
    }

    static let signalled: uv_signal_cb = { signal, _ in
        guard let signal else { return }
        unsafeDowncast(signal.asHandle.owner, to: SignalWatcher.self).fire()
    }

    static let woken: uv_async_cb = { async in
        guard let async else { return }
        (async.asHandle.owner as! any Draining).drain()
    }
}
