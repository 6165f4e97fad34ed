/// Sizes the framing bounds. A receiver announces its own maximum frame size in SETTINGS.
public enum WireLimits {
    /// Maximum payload a receiver accepts until the peer's SETTINGS say otherwise.
    public static let defaultMaxFrameSize = 1 << 20
    /// The smallest maximum frame size a peer may announce: every implementation handles 16 KiB.
    public static let minimumMaxFrameSize = 1 << 14
    /// The largest maximum frame size a peer may announce (16 MiB).
    public static let maximumMaxFrameSize = 1 << 24
    /// Longest method name, in UTF-8 bytes (u16 length prefix).
    public static let maxMethodNameLength = Int(UInt16.max)
    /// Most metadata entries on one call (u16 count).
    public static let maxMetadataEntries = Int(UInt16.max)
    /// Longest metadata key, in UTF-8 bytes (u8 length prefix).
    public static let maxMetadataKeyLength = Int(UInt8.max)
    /// Longest metadata value (u16 length prefix).
    public static let maxMetadataValueLength = Int(UInt16.max)
    /// The most metadata a server takes on one call, with each entry counted as its key, its value
    /// and ``metadataEntryOverhead`` bytes (HTTP/2's accounting for header lists; gRPC's usual limit
    /// is of this size). A larger call is refused instead of held: 65,535 one-byte entries fill a
    /// 320 KiB frame but took 4.7 MB as entries, for each of a connection's open calls.
    public static let maxMetadataSize = 16_384
    /// What each metadata entry counts towards ``maxMetadataSize`` beyond its key and value.
    public static let metadataEntryOverhead = 32
    /// Longest status or GOAWAY message in UTF-8 bytes; longer messages are cut at a character boundary.
    public static let maxStatusMessageLength = Int(UInt16.max)
}
