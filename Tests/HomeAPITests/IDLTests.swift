import Foundation
import HomeAPI
import HomeClient
import SwiftProtobuf
import Testing

/// The service definitions in proto/home/v1 (the API's IDL, from which other languages generate
/// their stubs) declare exactly the methods the server serves and the SDK knows, each with the
/// access and mutation options the server applies.
@Suite struct IDLTests {
    /// One `rpc` of a `service` block.
    struct Declared: Equatable, CustomStringConvertible {
        var name: String
        var request: String
        var response: String
        var isStreaming: Bool
        var access: String?
        var mutates: Bool

        var description: String {
            "\(name)(\(request)) -> \(isStreaming ? "stream " : "")\(response) \(access ?? "no access") \(mutates ? "mutates" : "")"
        }
    }

    /// Every rpc of every service in proto/home/v1, by full name, in file and declaration order.
    static func declared() throws -> [Declared] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let folder = root.appendingPathComponent("proto/home/v1")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".proto") }
            .sorted()
        let service = try Regex(#"(?m)^service (\w+) \{\n((?:.*\n)*?)\}"#)
        // An option's value is a word, or a string (adjacent literals over several lines, as protoc joins them).
        let rpc = try Regex(
            #"rpc (\w+)\((\w+)\) returns \((stream )?(\w+)\) \{((?:\s*option \([\w.]+\) =\s*(?:\w+|"[^"]*"(?:\s*"[^"]*")*);)*)\s*\}"#
        )
        let access = try Regex(#"option \(home\.v1\.access\) = (\w+);"#)
        var methods: [Declared] = []
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for block in text.matches(of: service) {
                let serviceName = String(block.output[1].substring!)
                let body = String(block.output[2].substring!)
                for method in body.matches(of: rpc) {
                    let options = String(method.output[5].substring ?? "")
                    methods.append(
                        Declared(
                            name: "home.v1.\(serviceName)/\(method.output[1].substring!)",
                            request: "home.v1.\(method.output[2].substring!)",
                            response: "home.v1.\(method.output[4].substring!)",
                            isStreaming: method.output[3].substring != nil,
                            access: options.firstMatch(of: access).map { String($0.output[1].substring!) },
                            mutates: options.contains("option (home.v1.mutates) = true;")
                        )
                    )
                }
                // Every rpc line was understood.
                #expect(body.matches(of: rpc).count == body.components(separatedBy: "rpc ").count - 1, "\(serviceName)")
            }
        }
        return methods
    }

    @Test func everyDeclaredMethodSaysWhoMayCallIt() throws {
        let methods = try Self.declared()
        #expect(methods.count >= 68)
        for method in methods {
            #expect(method.access != nil && method.access != "ACCESS_UNSPECIFIED", "\(method.name) names no access")
        }
    }

    @Test func theServersMethodsAreTheDeclaredOnesWithTheirOptions() throws {
        let served = ["home.v1.HomeService/", "home.v1.AccountService/", "home.v1.AdminService/"]
        let declared = try Self.declared().filter { method in served.contains { method.name.hasPrefix($0) } }
        let access: [RequiredRole: String] = [
            .anyAccount: "ACCESS_ANY_ACCOUNT", .member: "ACCESS_MEMBER", .administrator: "ACCESS_ADMINISTRATOR",
            .serverOwner: "ACCESS_SERVER_OWNER",
        ]
        let server = HomeAPI.methods.map {
            Declared(
                name: $0.name,
                request: $0.requestType,
                response: $0.responseType,
                isStreaming: $0.isStreaming,
                access: access[$0.role],
                mutates: $0.isMutation
            )
        }
        #expect(Set(server.map(\.description)).symmetricDifference(declared.map(\.description)).isEmpty)
        #expect(server.count == declared.count)
    }

    @Test func theSDKKnowsEveryDeclaredMethodWithItsTypes() throws {
        let declared = try Self.declared().map { "\($0.name) \($0.request) \($0.response) \($0.isStreaming)" }
        let client = MethodTypes.all.map {
            "\($0.name) \($0.request.protoMessageName) \($0.response.protoMessageName) \($0.isStreaming)"
        }
        #expect(Set(client).symmetricDifference(declared).isEmpty)
        #expect(client.count == declared.count)
    }
}
