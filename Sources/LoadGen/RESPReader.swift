/// Just enough of Redis's RESP2 to read replies and pub/sub pushes: simple strings, errors,
/// integers, bulk strings and arrays of them. Bytes are appended as they arrive; complete values
/// are taken off the front.
struct RESPReader {
    enum Value: Equatable {
        case simple(String)
        case error(String)
        case integer(Int64)
        /// `nil` for the null bulk string.
        case bulk([UInt8]?)
        case array([Value])
    }

    private var buffer: [UInt8] = []
    private var position = 0

    mutating func append(_ bytes: Span<UInt8>) {
        if position > 0 && position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        }
        bytes.withUnsafeBufferPointer { buffer.append(contentsOf: $0) }
    }

    /// The next complete value, or `nil` until more bytes arrive.
    /// - Throws: `RESPError` for bytes that are not RESP.
    mutating func next() throws(RESPError) -> Value? {
        var cursor = position
        guard let value = try parse(at: &cursor) else { return nil }
        position = cursor
        if position > 65_536 && position * 2 > buffer.count {
            buffer.removeFirst(position)
            position = 0
        }
        return value
    }

    private func parse(at cursor: inout Int) throws(RESPError) -> Value? {
        guard cursor < buffer.count else { return nil }
        let type = buffer[cursor]
        guard let line = self.line(from: cursor + 1) else { return nil }
        let text = String(decoding: buffer[(cursor + 1)..<line], as: UTF8.self)
        var next = line + 2
        switch type {
        case UInt8(ascii: "+"):
            cursor = next
            return .simple(text)
        case UInt8(ascii: "-"):
            cursor = next
            return .error(text)
        case UInt8(ascii: ":"):
            guard let number = Int64(text) else { throw RESPError(message: "bad integer \(text)") }
            cursor = next
            return .integer(number)
        case UInt8(ascii: "$"):
            guard let length = Int(text), length >= -1 else { throw RESPError(message: "bad bulk length \(text)") }
            if length == -1 {
                cursor = next
                return .bulk(nil)
            }
            guard buffer.count >= next + length + 2 else { return nil }
            let bytes = Array(buffer[next..<(next + length)])
            cursor = next + length + 2
            return .bulk(bytes)
        case UInt8(ascii: "*"):
            guard let count = Int(text), count >= -1 else { throw RESPError(message: "bad array length \(text)") }
            var elements: [Value] = []
            for _ in 0..<max(0, count) {
                guard let element = try parse(at: &next) else { return nil }
                elements.append(element)
            }
            cursor = next
            return .array(elements)
        default:
            throw RESPError(message: "unexpected type byte \(type)")
        }
    }

    /// The index of the `\r` ending the line that starts at `start`.
    private func line(from start: Int) -> Int? {
        var index = start
        while index + 1 < buffer.count {
            if buffer[index] == UInt8(ascii: "\r") && buffer[index + 1] == UInt8(ascii: "\n") { return index }
            index += 1
        }
        return nil
    }

    /// A command as a RESP array of bulk strings.
    static func command(_ parts: [String]) -> [UInt8] {
        var bytes = Array("*\(parts.count)\r\n".utf8)
        for part in parts {
            bytes += Array("$\(part.utf8.count)\r\n".utf8)
            bytes += Array(part.utf8)
            bytes += [13, 10]
        }
        return bytes
    }
}

struct RESPError: Error, CustomStringConvertible {
    let message: String
    var description: String { "RESP: \(message)" }
}
