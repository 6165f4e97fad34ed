internal import Crypto

/// Bearer tokens: 256 random bits from the system's CSPRNG (through swift-crypto), shown once; the
/// server keeps only their SHA-256. A token carries full entropy, so a fast hash is enough: there is
/// nothing to guess from a leaked hash.
enum TokenGenerator {
    static let prefix = "hrt_"
    /// Accessories' pairing credentials.
    static let credentialPrefix = "hac_"

    /// A new token, as the user (or the accessory) will present it.
    static func newToken(prefix: String = prefix) -> String {
        let key = SymmetricKey(size: .bits256)
        let hex = key.withUnsafeBytes { bytes in bytes.map { hexByte($0) }.joined() }
        return prefix + hex
    }

    /// What is stored and looked up for `token`.
    static func hash(_ token: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(token.utf8)))
    }

    /// Compares two digests in time that depends only on their length.
    static func constantTimeEqual(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        guard first.count == second.count else { return false }
        var difference: UInt8 = 0
        for index in first.indices { difference |= first[index] ^ second[index] }
        return difference == 0
    }

    private static let hexDigits = Array("0123456789abcdef")

    private static func hexByte(_ byte: UInt8) -> String {
        String([hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
    }
}
