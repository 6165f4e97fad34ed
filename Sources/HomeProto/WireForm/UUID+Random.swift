public import Foundation

extension UUID {
    /// A random (version 4) UUID from the standard library's system generator.
    ///
    /// Foundation's `UUID()` on Linux opens, reads and closes /dev/urandom for each one: making a
    /// million simulated accessories' ids blocked the load generator's loop for over ten seconds,
    /// and every SDK mutation paid three system calls for its idempotency key.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes = uuid_t(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            raw.storeBytes(of: generator.next() as UInt64, as: UInt64.self)
            raw.storeBytes(of: generator.next() as UInt64, toByteOffset: 8, as: UInt64.self)
        }
        bytes.6 = bytes.6 & 0x0F | 0x40  // version 4
        bytes.8 = bytes.8 & 0x3F | 0x80  // RFC 4122 variant
        return UUID(uuid: bytes)
    }
}
