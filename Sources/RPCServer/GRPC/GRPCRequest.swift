import Wire

/// One gRPC request as it arrives on an HTTP/2 stream: its header block read into what the server
/// needs, then its body (one length-prefixed message). The first fault found is kept and answered
/// once the header block is complete. A class: the connection updates it in place for every
/// header field and body piece.
final class GRPCRequest {
    /// `:path` without its leading slash: the full method name, `package.Service/Method`, as bytes
    /// (the connection compares them with the last call's before it makes a string).
    var path: [UInt8] = []
    /// The value of `authorization`, if sent.
    var authorization: [UInt8]?
    var metadata: [MetadataEntry] = []
    /// `grpc-timeout`, in milliseconds; `nil`: none.
    var timeoutMilliseconds: UInt64?
    /// Bytes of the header block, counted as HTTP/2 does (name, value and 32 each).
    var headerBytes = 0
    /// What is wrong with the request, if anything: answered instead of calling the method.
    var fault: Fault?
    /// The body received so far: a 5-byte prefix (compressed flag, length) and the message.
    var body: [UInt8] = []
    /// The call, once the header block was accepted.
    var call: ServerCall?
    /// Whether the response's header block was sent (a later status then goes in trailers).
    var isResponding = false

    enum Fault {
        /// Not a gRPC request: answered with this HTTP status and no gRPC status (the spec's answer
        /// to a content type that does not begin with `application/grpc`, or a method other than POST).
        case http(status: Int)
        case grpc(CallStatus)
    }

    /// The longest header block taken: our protocol's metadata limit, plus room for the fields every
    /// gRPC client sends (pseudo-headers, `te`, `content-type`, `user-agent`, `grpc-timeout`).
    static let maxHeaderBytes = WireLimits.maxMetadataSize + 2_048

    /// Reads one header field. Names are compared as bytes: a string for each of the eight or so
    /// fields every call carries cost more than the rest of the call.
    func read(name: Span<UInt8>, value: Span<UInt8>) {
        headerBytes += name.count + value.count + 32
        guard fault == nil else { return }
        guard headerBytes <= Self.maxHeaderBytes else {
            fault = .grpc(
                CallStatus(code: .resourceExhausted, message: "header block larger than \(Self.maxHeaderBytes) bytes")
            )
            return
        }
        switch HeaderName(name) {
        case .path:
            let hasSlash = value.count > 0 && value[0] == UInt8(ascii: "/")
            path = [UInt8](capacity: value.count) { output in
                for index in (hasSlash ? 1 : 0)..<value.count { output.append(value[index]) }
            }
        case .method:
            if !value.equals("POST") { fault = .http(status: 405) }
        case .contentType:
            if !value.hasPrefix("application/grpc") { fault = .http(status: 415) }
        case .authorization:
            authorization = [UInt8](copying: value)
        case .timeout:
            guard let milliseconds = Self.timeoutMilliseconds(String(copying: value)) else {
                fault = .grpc(CallStatus(code: .invalidArgument, message: "malformed grpc-timeout"))
                return
            }
            timeoutMilliseconds = milliseconds
        case .encoding:
            guard value.equals("identity") else {
                let encoding = String(copying: value)
                fault = .grpc(
                    CallStatus(
                        code: .unimplemented,
                        message: "grpc-encoding \(encoding) is not supported: send messages uncompressed (identity)"
                    )
                )
                return
            }
        case .ignored:
            break
        case .metadata:
            metadata.append(MetadataEntry(key: String(copying: name), value: [UInt8](copying: value)))
        }
    }

    /// `grpc-timeout`'s value (at most 8 digits and a unit: H, M, S, m, u, n) in milliseconds, rounded
    /// up so that a short timeout does not become none.
    static func timeoutMilliseconds(_ text: String) -> UInt64? {
        guard let unit = text.last, text.count >= 2, text.count <= 9,
            let amount = UInt64(text.dropLast()), text.dropLast().allSatisfy(\.isASCII)
        else { return nil }
        switch unit {
        case "H": return amount * 3_600_000
        case "M": return amount * 60_000
        case "S": return amount * 1_000
        case "m": return amount
        case "u": return (amount + 999) / 1_000
        case "n": return (amount + 999_999) / 1_000_000
        default: return nil
        }
    }

    /// The request message, once the body is complete: exactly one uncompressed length-prefixed message.
    func message() -> Admission<ArraySlice<UInt8>> {
        guard body.count >= 5 else {
            return .refused(CallStatus(code: .invalidArgument, message: "the request must be exactly one message"))
        }
        let length = Int(body[1]) << 24 | Int(body[2]) << 16 | Int(body[3]) << 8 | Int(body[4])
        guard body[0] == 0 else {
            return .refused(CallStatus(code: .internal, message: Self.compressedMessage(flag: body[0])))
        }
        guard body.count == 5 + length else {
            let message =
                body.count < 5 + length
                ? "the request message is cut short: its prefix says \(length) bytes, \(body.count - 5) came"
                : "the request must be exactly one message"
            return .refused(CallStatus(code: .invalidArgument, message: message))
        }
        return .accepted(body[5...])
    }
}

/// What a header field's name means to the server. Told apart by length first, so that each of
/// the eight or so fields every call carries is compared with one or two names, not all of them.
enum HeaderName {
    case path
    case method
    case contentType
    case authorization
    case timeout
    case encoding
    /// Transport fields (`te`, `user-agent`, `grpc-accept-encoding`, `accept-encoding`, `host`), the
    /// other pseudo-headers (`:scheme` and `:authority` say nothing the server needs), gRPC's reserved
    /// `grpc-*` fields and binary metadata (`*-bin`): not used by any method.
    case ignored
    /// The call's metadata (an idempotency key, for one).
    case metadata

    init(_ name: Span<UInt8>) {
        self =
            switch name.count {
            case 2 where name.equals("te"): .ignored
            case 4 where name.equals("host"): .ignored
            case 5 where name.equals(":path"): .path
            case 7 where name.equals(":method"): .method
            case 10 where name.equals("user-agent"): .ignored
            case 12 where name.equals("content-type"): .contentType
            case 12 where name.equals("grpc-timeout"): .timeout
            case 13 where name.equals("authorization"): .authorization
            case 13 where name.equals("grpc-encoding"): .encoding
            case 15 where name.equals("accept-encoding"): .ignored
            default:
                name.count > 0 && name[0] == UInt8(ascii: ":") || name.hasPrefix("grpc-") || name.hasSuffix("-bin")
                    ? .ignored : .metadata
            }
    }
}

/// What a request's part came to: the value, or the status that refuses the call.
enum Admission<Value> {
    case accepted(Value)
    case refused(CallStatus)
}

extension GRPCRequest {
    /// The length of the message at the start of `body` once it is whole (its 5-byte prefix and
    /// that many bytes have arrived); `nil` before.
    static func wholeMessageLength(_ body: [UInt8]) -> Int? {
        guard body.count >= 5 else { return nil }
        let length = Int(body[1]) << 24 | Int(body[2]) << 16 | Int(body[3]) << 8 | Int(body[4])
        return body.count >= 5 + length ? length : nil
    }

    /// Why a message whose compressed flag is `flag` (not 0) is refused: no encoding is ever agreed.
    static func compressedMessage(flag: UInt8) -> String {
        flag == 1
            ? "the request message is compressed, but no grpc-encoding was agreed: send it uncompressed"
            : "the request message's compressed flag is \(flag), not 0 or 1"
    }
}

extension String {
    /// The bytes as UTF-8 (invalid sequences repaired).
    init(copying bytes: Span<UInt8>) {
        self = String(decoding: [UInt8](copying: bytes), as: UTF8.self)
    }
}

extension Span where Element == UInt8 {
    /// Whether the bytes are `text`'s UTF-8.
    func equals(_ text: String) -> Bool {
        let literal = text.utf8.span
        return count == literal.count && matches(literal, at: 0)
    }

    func hasPrefix(_ text: String) -> Bool {
        let literal = text.utf8.span
        return count >= literal.count && matches(literal, at: 0)
    }

    func hasSuffix(_ text: String) -> Bool {
        let literal = text.utf8.span
        return count >= literal.count && matches(literal, at: count - literal.count)
    }

    /// Whether `literal`'s bytes are these from `offset` on (the caller checked they fit): eight at
    /// a time, then one by one. Byte by byte (spans on both sides) it cost about 1,000 instructions
    /// a call over the eight or so header fields every call carries. The loads are bounds-checked
    /// and hold no pointer; any bit pattern is a valid integer: safe despite their name.
    private func matches(_ literal: Span<UInt8>, at offset: Int) -> Bool {
        let (mine, theirs) = (bytes, literal.bytes)
        var index = 0
        while index + 8 <= literal.count {
            guard
                mine.unsafeLoadUnaligned(fromByteOffset: offset + index, as: UInt64.self)
                    == theirs.unsafeLoadUnaligned(fromByteOffset: index, as: UInt64.self)
            else { return false }
            index += 8
        }
        while index < literal.count {
            guard self[offset + index] == literal[index] else { return false }
            index += 1
        }
        return true
    }
}

extension Array where Element == UInt8 {
    init(copying bytes: Span<UInt8>) {
        self.init(capacity: bytes.count) { output in
            for index in bytes.indices { output.append(bytes[index]) }
        }
    }
}
