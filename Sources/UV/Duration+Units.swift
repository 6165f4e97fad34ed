extension Duration {
    /// Milliseconds, rounded up so that a timer (or a deadline) never fires early; negative durations
    /// count as zero, and durations past `UInt64.max` milliseconds as `UInt64.max`.
    public var wholeMillisecondsRoundedUp: UInt64 {
        guard self > .zero else { return 0 }
        let (seconds, attoseconds) = components
        // Positive: seconds ≥ 0 and attoseconds in 0..<10^18.
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        let fraction = UInt64((attoseconds + attosecondsPerMillisecond - 1) / attosecondsPerMillisecond)
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1000)
        guard !overflow else { return .max }
        let (total, carry) = whole.addingReportingOverflow(fraction)
        return carry ? .max : total
    }

    /// Whole microseconds, rounded down (latencies, uptimes); negative durations count as zero, and
    /// durations past `UInt64.max` microseconds as `UInt64.max`.
    public var wholeMicroseconds: UInt64 {
        guard self > .zero else { return 0 }
        let (seconds, attoseconds) = components
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return .max }
        let (total, carry) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000_000))
        return carry ? .max : total
    }
}
