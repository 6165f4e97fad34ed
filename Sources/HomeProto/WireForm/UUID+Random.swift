public import Foundation

extension UUID {
    /// A random (version 4) UUID from the standard library's system generator.
    ///
    /// Foundation's `UUID()` on Linux opens, reads and closes /dev/urandom for each one: making a
    /// million simulated accessories' ids blocked the load generator's loop for over ten seconds,
    /// and every SDK mutation paid three system calls for its idempotency key.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let high: UInt64 = generator.next()
        let low: UInt64 = generator.next()
        func byte(_ word: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: word >> (8 * index)) }
        return UUID(
            uuid: (
                byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3), byte(high, 4), byte(high, 5),
                byte(high, 6) & 0x0F | 0x40,  // version 4
                byte(high, 7),
                byte(low, 0) & 0x3F | 0x80,  // RFC 4122 variant
                byte(low, 1), byte(low, 2), byte(low, 3), byte(low, 4), byte(low, 5), byte(low, 6), byte(low, 7)
            )
        )
    }
}
