import Foundation
import HomeProto
import Testing

struct UUIDRandomTests {
    /// Version 4, RFC 4122 variant, as Foundation's `UUID()` makes them, and no two alike.
    @Test func randomUUIDsAreVersion4AndDistinct() {
        var seen = Set<UUID>()
        for _ in 0..<10_000 {
            let id = UUID.random()
            #expect(id.uuid.6 >> 4 == 4)
            #expect(id.uuid.8 >> 6 == 0b10)
            #expect(id.uuidString.count == 36)
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
        // Every other bit varies: OR-ing all of them together sets each one.
        var union = [UInt8](repeating: 0, count: 16)
        for id in seen.prefix(200) {
            withUnsafeBytes(of: id.uuid) { for (index, byte) in $0.enumerated() { union[index] |= byte } }
        }
        #expect(union[6] == 0x4F && union[8] == 0xBF)
        #expect(union.enumerated().allSatisfy { [6, 8].contains($0.offset) || $0.element == 0xFF })
    }
}
