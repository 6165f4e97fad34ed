import Testing
import UV

/// The conversions themselves, case by case: timers and deadlines hid an overflow for negative
/// sub-second durations, which reached them from a client's timeout.
@Suite struct DurationUnitsTests {
    @Test(
        arguments: [
            (Duration.zero, UInt64(0)),
            (.nanoseconds(1), 1),
            (.microseconds(999), 1),
            (.milliseconds(1), 1),
            (.nanoseconds(1_000_001), 2),
            (.seconds(2), 2000),
            (.milliseconds(-2), 0),
            (.nanoseconds(-1), 0),
            (.seconds(-3), 0),
            (.seconds(Int64.max), UInt64.max),
            (.seconds(Int64.min), 0),
            (.seconds(Int64.max / 1000), UInt64(Int64.max / 1000) * 1000),
        ] as [(Duration, UInt64)]
    )
    func millisecondsRoundUpAndClamp(duration: Duration, expected: UInt64) {
        #expect(duration.wholeMillisecondsRoundedUp == expected)
    }

    @Test(
        arguments: [
            (Duration.zero, UInt64(0)),
            (.nanoseconds(999), 0),
            (.microseconds(5), 5),
            (.milliseconds(3), 3000),
            (.seconds(1) + .nanoseconds(1500), 1_000_001),
            (.milliseconds(-2), 0),
            (.microseconds(-1), 0),
            (.seconds(Int64.max), UInt64.max),
        ] as [(Duration, UInt64)]
    )
    func microsecondsRoundDownAndClamp(duration: Duration, expected: UInt64) {
        #expect(duration.wholeMicroseconds == expected)
    }
}
