import CLibUV

// libuv's handle structs share their leading fields (uv_handle_t, then uv_stream_t for streams), and
// its API takes the common prefix type. Swift does not convert between the struct pointer types, so
// these helpers reinterpret the same address; they are the only casts between handle types.

extension UnsafeMutablePointer<uv_tcp_t> {
    var asStream: UnsafeMutablePointer<uv_stream_t> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: uv_stream_t.self)
    }
}

extension UnsafeMutablePointer<uv_pipe_t> {
    var asStream: UnsafeMutablePointer<uv_stream_t> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: uv_stream_t.self)
    }
}

extension UnsafeMutablePointer<uv_stream_t> {
    var asHandle: UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: uv_handle_t.self)
    }
}

extension UnsafeMutablePointer<uv_timer_t> {
    var asHandle: UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: uv_handle_t.self)
    }
}

extension UnsafeMutablePointer<uv_signal_t> {
    var asHandle: UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: uv_handle_t.self)
    }
}

extension UnsafeMutablePointer<uv_prepare_t> {
    var asHandle: UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: uv_handle_t.self)
    }
}

extension UnsafeMutablePointer<uv_async_t> {
    var asHandle: UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: uv_handle_t.self)
    }
}

extension UnsafeMutablePointer<uv_handle_t> {
    /// The wrapper object stored in `data` by ``HandleOwner/retainWhileOpen(_:)``, unretained.
    var owner: AnyObject {
        Unmanaged<AnyObject>.fromOpaque(pointee.data).takeUnretainedValue()
    }

    /// Runs `body` with the wrapper object, which must be an `Owner`, without retaining it: the
    /// reference in `data` keeps it alive until the close callback, and no other callback runs
    /// inside that one. (Taking it as a value cost a retain and a release, two atomic operations,
    /// per callback: per read, per allocation, per loop iteration.)
    func withOwner<Owner: AnyObject, Result>(as _: Owner.Type, _ body: (Owner) -> Result) -> Result {
        Unmanaged<Owner>.fromOpaque(pointee.data)._withUnsafeGuaranteedRef(body)
    }
}

/// A Swift object that owns one libuv handle.
///
/// libuv: "a handle's memory may be freed only in its close callback" (docs/src/design.rst). So the
/// wrapper stores a retained reference to itself in the handle's `data` when the handle is initialised;
/// the close callback (``Trampolines/close``) calls ``handleDidClose()``, which frees the memory, and then
/// drops that retain. Until then libuv keeps the wrapper alive, whoever else lets go of it.
protocol HandleOwner: AnyObject {
    /// Starts closing the handle if it is open; idempotent.
    func close()
    /// Called once from the close callback: free the handle's memory and notify the user.
    func handleDidClose()
}

extension HandleOwner {
    /// Stores a retained reference to `self` in `handle.data`; balanced in ``releaseOwner(_:)``.
    func retainWhileOpen(_ handle: UnsafeMutablePointer<uv_handle_t>) {
        handle.pointee.data = UnsafeMutableRawPointer(Unmanaged.passRetained(self as AnyObject).toOpaque())
    }

}

/// Drops the reference ``HandleOwner/retainWhileOpen(_:)`` stored, read from `data` before the handle's
/// memory was freed. The owner may be deinitialised by this call, so it comes last.
func releaseOwner(_ data: UnsafeMutableRawPointer?) {
    guard let data else { return }
    Unmanaged<AnyObject>.fromOpaque(data).release()
}
