import HTTP2
import Wire

/// How a call's answer looks on the gRPC door: the response's header block, the 5-byte prefix of
/// each message, and the status in trailers (`grpc-status`, `grpc-message` percent-encoded, and the
/// details as a `google.rpc.Status` in `grpc-status-details-bin`, as grpc's rich error model has them).
enum GRPCStatusEncoding {
    /// The response's header block, the same for every call.
    static let responseHeaders = HeaderBlock([":status": "200", "content-type": "application/grpc"])

    /// The trailers of a call that succeeded.
    static let okTrailers = HeaderBlock(["grpc-status": "0"])

    /// The trailers carrying `status`; `detailsType` names the protobuf message the server's details
    /// are (`home.v1.ErrorDetails`), for the `google.protobuf.Any` that wraps them.
    static func trailers(_ status: CallStatus, detailsType: String, withResponseHeaders: Bool) -> HeaderBlock {
        if status.code == .ok && status.message.isEmpty && !withResponseHeaders { return okTrailers }
        var block = withResponseHeaders ? responseHeaders : HeaderBlock()
        block.add("grpc-status", String(status.code.rawValue))
        let message = status.fitted(toFrameSize: CallStatus.maxServerMessageBytes + 4).message
        if !message.isEmpty { block.add("grpc-message", percentEncoded(message)) }
        if !status.details.isEmpty {
            block.add("grpc-status-details-bin", base64(richStatus(status, message: message, detailsType: detailsType)))
        }
        return block
    }

    /// A message's 5-byte prefix: not compressed, then its length, big-endian.
    static func appendPrefix(length: Int, to output: inout OutputSpan<UInt8>) {
        output.append(0)
        output.append(UInt8(truncatingIfNeeded: length >> 24))
        output.append(UInt8(truncatingIfNeeded: length >> 16))
        output.append(UInt8(truncatingIfNeeded: length >> 8))
        output.append(UInt8(truncatingIfNeeded: length))
    }

    /// gRPC's percent-encoding of `grpc-message`: bytes outside printable ASCII, and `%`, as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            if byte >= 0x20 && byte <= 0x7E && byte != UInt8(ascii: "%") {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded.unicodeScalars.append("%")
                encoded.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                encoded.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0xF)]))
            }
        }
        return encoded
    }

    /// `google.rpc.Status { code, message, details: [Any { type_url, value }] }`, encoded by hand:
    /// the runtime knows no protobuf types.
    static func richStatus(_ status: CallStatus, message: String, detailsType: String) -> [UInt8] {
        var any: [UInt8] = []
        appendField(1, bytes: Array("type.googleapis.com/\(detailsType)".utf8), to: &any)
        appendField(2, bytes: status.details, to: &any)
        var encoded: [UInt8] = []
        appendVarint(UInt64(1 << 3), to: &encoded)
        appendVarint(UInt64(status.code.rawValue), to: &encoded)
        if !message.isEmpty { appendField(2, bytes: Array(message.utf8), to: &encoded) }
        appendField(3, bytes: any, to: &encoded)
        return encoded
    }

    private static func appendField(_ number: UInt64, bytes: [UInt8], to output: inout [UInt8]) {
        appendVarint(number << 3 | 2, to: &output)
        appendVarint(UInt64(bytes.count), to: &output)
        output.append(contentsOf: bytes)
    }

    private static func appendVarint(_ value: UInt64, to output: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            output.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        output.append(UInt8(value))
    }

    /// Base64 without padding, as gRPC sends binary metadata.
    static func base64(_ bytes: [UInt8]) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let chunk =
                UInt32(bytes[index]) << 16
                | (remaining > 1 ? UInt32(bytes[index + 1]) << 8 : 0)
                | (remaining > 2 ? UInt32(bytes[index + 2]) : 0)
            let characters = min(remaining, 3) + 1
            for position in 0..<characters {
                encoded.append(alphabet[Int(chunk >> UInt32(18 - 6 * position) & 0x3F)])
            }
            index += 3
        }
        return encoded
    }
}
