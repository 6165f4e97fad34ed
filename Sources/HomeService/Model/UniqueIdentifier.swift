/// A 128-bit identifier, stable for an object's life (HomeKit's `uniqueIdentifier`), carried on the
/// wire as 16 bytes and shown as a UUID string.
public struct UniqueIdentifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A new random (version 4) identifier. `SystemRandomNumberGenerator` draws from the kernel's
    /// CSPRNG (getrandom on Linux), so identifiers cannot be guessed from others.
    public static func random() -> UniqueIdentifier {
        var generator = SystemRandomNumberGenerator()
        let high = (generator.next() & ~0xF000) | 0x4000  // version 4
        let low = (generator.next() & ~(0xC << 60)) | (0x8 << 60)  // RFC 4122 variant
        return UniqueIdentifier(high: high, low: low)
    }

    /// From its 16 wire bytes (big-endian); `nil` for any other length.
    ///
    /// Inlinable so that callers in other modules (the API edge parses every request's ids from
    /// `Data`) get a specialized copy: unspecialized, each call spent about a fifth of a cached
    /// read in the runtime's generic metadata lookups (perf, 50 connections × depth 16).
    @inlinable
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        // Contiguous bytes (an array, Foundation's Data) are read as two big-endian words: iterating
        // Data byte by byte through its iterator cost more than the rest of the id's parsing (seen in
        // profiles), and sixteen shifts more than two loads.
        if let (high, low) = bytes.withContiguousStorageIfAvailable({ buffer -> (UInt64, UInt64) in
            let raw = UnsafeRawBufferPointer(buffer)
            return (
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }) {
            self.init(high: high, low: low)
            return
        }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var index = 0
        for byte in bytes {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
            index += 1
        }
        self.init(high: high, low: low)
    }

    /// The 16 wire bytes, big-endian. Copied from the two words at once: filling a zeroed array byte
    /// by byte cost about 700 instructions, and every stored row and event names ids this way.
    public var bytes: [UInt8] {
        withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Array($0) }
    }

    /// Parses `XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX` (either case).
    public init?(uuidString: String) {
        let groups = uuidString.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return nil }
        let hex = groups.joined()
        guard let high = UInt64(hex.prefix(16), radix: 16), let low = UInt64(hex.suffix(16), radix: 16) else {
            return nil
        }
        self.init(high: high, low: low)
    }

    /// The uppercase UUID string.
    public var description: String {
        let hex = Self.hex(high) + Self.hex(low)
        let cuts = [8, 12, 16, 20]
        var text = ""
        for (index, character) in hex.enumerated() {
            if cuts.contains(index) { text.append("-") }
            text.append(character)
        }
        return text
    }

    public static func < (lhs: UniqueIdentifier, rhs: UniqueIdentifier) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// An identifier typed by what it names: an `ID<IDKind.Room>` cannot be passed where an
/// `ID<IDKind.Home>` is expected.
public struct ID<Kind>: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let raw: UniqueIdentifier

    public init(_ raw: UniqueIdentifier) {
        self.raw = raw
    }

    /// A new random identifier.
    public static func random() -> ID { ID(.random()) }

    public static func < (lhs: ID, rhs: ID) -> Bool { lhs.raw < rhs.raw }
    public var description: String { raw.description }
}

/// The kinds of object an ``ID`` can name.
public enum IDKind {
    public enum Account {}
    public enum Home {}
    public enum Room {}
    public enum Zone {}
    public enum Accessory {}
    public enum Service {}
    public enum Characteristic {}
    public enum ServiceGroup {}
    public enum ActionSet {}
    public enum Action {}
    public enum Trigger {}
    public enum AccessToken {}
    /// A member of one home (``UserID``).
    public enum User {}
}

public typealias AccountID = ID<IDKind.Account>
public typealias HomeID = ID<IDKind.Home>
public typealias RoomID = ID<IDKind.Room>
public typealias ZoneID = ID<IDKind.Zone>
public typealias AccessoryID = ID<IDKind.Accessory>
public typealias ServiceID = ID<IDKind.Service>
public typealias CharacteristicID = ID<IDKind.Characteristic>
public typealias ServiceGroupID = ID<IDKind.ServiceGroup>
public typealias ActionSetID = ID<IDKind.ActionSet>
public typealias ActionID = ID<IDKind.Action>
public typealias TriggerID = ID<IDKind.Trigger>
public typealias AccessTokenID = ID<IDKind.AccessToken>
public typealias UserID = ID<IDKind.User>
