import Foundation
public import HomeService

/// Which client certificates stand for whom (homed `--tls-client-identities`), under mutual TLS: a
/// certificate mapped to an account authenticates a connection that sends no token, as that
/// account; one mapped to an accessory binds the accessory's link (its Attach must name that
/// accessory, with its credential as ever). Subjects are RFC 2253 text, as OpenSSL prints them
/// (`openssl x509 -noout -subject -nameopt RFC2253`). Loop thread only; replaced whole on a reload.
public final class ClientIdentities {
    public private(set) var accounts: [String: AccountID] = [:]
    public private(set) var accessories: [String: AccessoryID] = [:]

    public init() {}

    /// Takes the mappings of `text`: one a line, `account ID SUBJECT` or `accessory ID SUBJECT`
    /// (the subject is the rest of the line); blank lines and lines starting with `#` are skipped.
    /// - Throws: ``HomeServiceError`` naming the first line that is not one of these.
    public func replace(with text: String) throws(HomeServiceError) {
        var accounts: [String: AccountID] = [:]
        var accessories: [String: AccessoryID] = [:]
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            let parts = trimmed.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            guard parts.count == 3, let id = UniqueIdentifier(uuidString: String(parts[1])) else {
                throw HomeServiceError(
                    .invalidParameter,
                    "line \(index + 1): expected 'account|accessory UUID SUBJECT'"
                )
            }
            let subject = parts[2].trimmingCharacters(in: .whitespaces)
            switch parts[0] {
            case "account": accounts[subject] = AccountID(id)
            case "accessory": accessories[subject] = AccessoryID(id)
            default:
                throw HomeServiceError(
                    .invalidParameter,
                    "line \(index + 1): '\(parts[0])' is neither account nor accessory"
                )
            }
        }
        self.accounts = accounts
        self.accessories = accessories
    }
}
