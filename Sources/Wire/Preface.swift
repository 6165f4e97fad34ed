/// The eight bytes each side sends first: the magic `HRPC\r\n`, then the protocol version (u16).
///
/// The client sends its preface and SETTINGS without waiting; the server checks the magic and version,
/// then answers with its own preface and SETTINGS. A server that does not speak the client's version
/// answers with its preface (so the client learns which version it speaks), a GOAWAY, and closes.
public struct Preface: Hashable, Sendable {
    /// `H R P C \r \n`: the CR LF catches channels that rewrite line endings.
    public static let magic: [UInt8] = [0x48, 0x52, 0x50, 0x43, 0x0D, 0x0A]
    /// Bytes in the preface: the magic and a u16 version.
    public static let length = 8
    /// The only version this implementation speaks.
    public static let currentVersion: UInt16 = 1

    public var version: UInt16

    public init(version: UInt16 = Preface.currentVersion) {
        self.version = version
    }
}
