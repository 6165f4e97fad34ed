import ArgumentParser
import Foundation
import HomeClient
import SwiftProtobuf

/// What `rpc-client call` does with its arguments before the call: finds the method from a full or
/// short name, and reads the JSON request, accepting UUIDs for ids and naming the field at fault.
enum CallRequest {
    /// The method named `name`: its full name (`home.v1.HomeService/AddHome`), or any tail of it
    /// that only one method ends with (`HomeService/AddHome`, `AddHome`).
    static func method(named name: String) throws -> MethodTypes.Entry {
        if let exact = MethodTypes.named(name) { return exact }
        let matches = MethodTypes.all.filter { $0.name.hasSuffix("/" + name) || $0.name.hasSuffix("." + name) }
        switch matches.count {
        case 1: return matches[0]
        case 0: throw ValidationError("unknown method \(name); `rpc-client methods` lists them")
        default:
            throw ValidationError(
                "\(name) names several methods (\(matches.map(\.name).joined(separator: ", "))): give the service too"
            )
        }
    }

    /// Parses `json` as a `type` request. Ids (a field named `id`, or ending in `Id`, `_id`, `Ids`,
    /// `_ids`: every bytes field of the API that holds an id) may be UUIDs as well as base64.
    /// - Throws: `ValidationError` naming the request type and, when one field is at fault, that field.
    static func parse(_ json: String, as type: any SwiftProtobuf.Message.Type) throws -> any SwiftProtobuf.Message {
        let typeName = type.protoMessageName
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
        else {
            throw ValidationError(
                "the request is not JSON; a \(typeName) is a JSON object, e.g. {} or {\"name\": \"x\"}"
            )
        }
        guard let fields = object as? [String: Any] else {
            throw ValidationError("the request must be a JSON object (a \(typeName)), not \(json)")
        }
        var replaced = 0
        let converted = fields.reduce(into: [String: Any]()) {
            $0[$1.key] = withUUIDsAsBase64($1.value, key: $1.key, replaced: &replaced)
        }
        do {
            // The text itself unless a UUID was replaced, so that swift-protobuf reads the numbers
            // as written rather than as JSONSerialization writes them back.
            if replaced == 0 { return try type.init(jsonString: json) }
            return try type.init(jsonUTF8Data: try JSONSerialization.data(withJSONObject: converted))
        } catch {
            // The first field that a request of its own cannot hold is the one to name.
            for (key, value) in converted.sorted(by: { $0.key < $1.key }) {
                let alone = try JSONSerialization.data(withJSONObject: [key: value])
                do {
                    _ = try type.init(jsonUTF8Data: alone)
                } catch {
                    throw ValidationError("field \"\(key)\" of \(typeName): \(reason(error))")
                }
            }
            throw ValidationError("the request is not a valid \(typeName): \(reason(error))")
        }
    }

    /// `value`, with each UUID string under an id key replaced by the base64 of its 16 bytes (the
    /// JSON form of protobuf bytes); nested objects are converted by their own keys.
    private static func withUUIDsAsBase64(_ value: Any, key: String, replaced: inout Int) -> Any {
        switch value {
        case let text as String where isIDKey(key):
            guard let uuid = UUID(uuidString: text) else { return text }
            replaced += 1
            return withUnsafeBytes(of: uuid.uuid) { Data($0) }.base64EncodedString()
        case let list as [Any]:
            return list.map { withUUIDsAsBase64($0, key: key, replaced: &replaced) }
        case let object as [String: Any]:
            return object.reduce(into: [String: Any]()) {
                $0[$1.key] = withUUIDsAsBase64($1.value, key: $1.key, replaced: &replaced)
            }
        default:
            return value
        }
    }

    private static func isIDKey(_ key: String) -> Bool {
        key == "id" || ["Id", "_id", "Ids", "_ids"].contains { key.hasSuffix($0) }
    }

    /// What was wrong, in words rather than the decoder's case names.
    private static func reason(_ error: any Error) -> String {
        guard let error = error as? JSONDecodingError else { return "\(error)" }
        switch error {
        case .unknownField(let name): return "no field \"\(name)\" (see the message in proto/home/v1)"
        case .malformedString: return "not a valid string here (ids are UUIDs or base64)"
        case .malformedNumber, .numberRange, .leadingZero: return "not a number of the field's type and range"
        case .malformedBool: return "not true or false"
        case .unrecognizedEnumValue: return "not one of the enum's values"
        case .illegalNull: return "null is not allowed here"
        case .conflictingOneOf: return "sets two fields of the same oneof"
        default: return "a value of the wrong type"
        }
    }
}
