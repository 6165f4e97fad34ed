import Foundation
import HomeAPI
import Wire

/// docs/API.md as a client reads it: the status each HomeKit code travels under, and the codes each
/// method's row lists.
struct APIDocument {
    let text: String

    static func load() throws -> APIDocument {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return APIDocument(text: try String(contentsOf: root.appendingPathComponent("docs/API.md"), encoding: .utf8))
    }

    /// "Method code" for every code in every method row ("name codes" and "value codes" expanded;
    /// numbers in parentheses and code spans are explanations, not codes).
    var methodCodes: Set<String> {
        var pairs: Set<String> = []
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            // | method | role | token scope | answers | codes |: the codes are the last cell.
            guard cells.count == 7 else { continue }
            let method = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            guard Self.methods.contains(method) else { continue }
            let codes = cells[5].replacingOccurrences(of: "name codes", with: "3, 46, 36, 35, 60")
                .replacingOccurrences(of: "value codes", with: "27, 43, 44, 45, 46, 51, 3")
            for code in Self.numbers(in: codes) { pairs.insert("\(method) \(code)") }
        }
        return pairs
    }

    /// The status of `code` by the document's table (UNKNOWN for a code it does not list).
    func status(of code: Int32) -> StatusCode {
        for line in text.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            // A row of the status table: "| NOT_FOUND (5) | 2 NotFound |".
            guard cells.count == 2,
                let status = StatusCode.allDefined.first(where: { cells[0] == "\($0.name) (\($0.rawValue))" })
            else { continue }
            if Self.numbers(in: cells[1]).contains(code) { return status }
        }
        return .unknown
    }

    /// The HAP status table: the HomeKit code a controller gets for each status an accessory answers
    /// with ("| -70401 | insufficient privileges | 17 |").
    var homeKitCodesOfHAPStatuses: [Int32: Int32] {
        var codes: [Int32: Int32] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| -704") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3, let status = Int32(cells[0]), let code = Int32(cells[2]) else { continue }
            codes[status] = code
        }
        return codes
    }

    /// The short names of the home API's methods (the accessory link's are documented apart).
    static let methods = Set(HomeAPI.methods.map { String($0.name.split(separator: "/").last!) })

    /// The whole numbers of `text` outside parentheses and code spans ("4 / 88" gives both).
    static func numbers(in text: String) -> [Int32] {
        var plain = ""
        var depth = 0
        var inCode = false
        for character in text {
            switch character {
            case "(": depth += 1
            case ")": depth -= 1
            case "`": inCode.toggle()
            default: if depth == 0 && !inCode { plain.append(character) }
            }
        }
        return plain.split { !$0.isNumber && $0 != "-" }.compactMap { Int32($0) }
    }
}
