extension Duration {
    /// Milliseconds, rounded up so that a timer (or a deadline) never fires early; negative durations
    /// count as zero.
    public var wholeMillisecondsRoundedUp: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        return UInt64(seconds) * 1000
            + UInt64((attoseconds + attosecondsPerMillisecond - 1) / attosecondsPerMillisecond)
    }

    /// Whole microseconds, rounded down (latencies, uptimes); negative durations count as zero.
    public var wholeMicroseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000)
    }
}
