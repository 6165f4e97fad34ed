import Foundation
import TestSupport
import Testing
import UV

extension [UInt8] {
    init(copying bytes: Span<UInt8>) {
        self.init()
        reserveCapacity(bytes.count)
        for index in bytes.indices { append(bytes[index]) }
    }
}

/// A Unix socket path unique to this process and call, short enough for `sun_path`.
func temporarySocketPath() -> String {
    "/tmp/homerpc-uv-\(getpid())-\(UUID().uuidString.prefix(8)).sock"
}

/// Lets the test open thousands of sockets: raises the soft descriptor limit to the hard one.
func raiseFileDescriptorLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// Echoes every byte back to its sender.
final class EchoServer: ListenerDelegate, ConnectionDelegate {
    var accepted = 0
    var closed = 0
    var closeErrors: [UVError] = []
    var onConnectionClosed: () -> Void = {}

    func listener(_ listener: Listener, didAccept connection: Connection) {
        accepted += 1
        connection.delegate = self
        #expect(throws: Never.self) { try connection.startReading() }
    }

    func listener(_ listener: Listener, didFailToAccept error: UVError) {
        Issue.record("accept failed: \(error)")
    }

    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        #expect(throws: Never.self) { try connection.write([UInt8](copying: bytes)) }
    }

    func connectionDidClose(_ connection: Connection, error: UVError?) {
        closed += 1
        if let error { closeErrors.append(error) }
        onConnectionClosed()
    }
}

/// Splits a byte stream into messages framed as `length u32 big-endian | bytes`.
struct LengthPrefixedReader {
    private var buffer: [UInt8] = []

    var bufferedByteCount: Int { buffer.count }

    mutating func append(_ bytes: Span<UInt8>) {
        buffer.append(contentsOf: [UInt8](copying: bytes))
    }

    mutating func nextMessage() -> [UInt8]? {
        guard buffer.count >= 4 else { return nil }
        let length = Int(buffer[0]) << 24 | Int(buffer[1]) << 16 | Int(buffer[2]) << 8 | Int(buffer[3])
        guard buffer.count >= 4 + length else { return nil }
        defer { buffer.removeFirst(4 + length) }
        return Array(buffer[4..<4 + length])
    }

    static func frame(_ message: [UInt8]) -> [UInt8] {
        let length = UInt32(message.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + message
    }
}

/// Sends `messageCount` length-prefixed messages, each in its own write, and checks that the echo
/// returns every one intact and in order; then closes.
final class EchoClient: ConnectionDelegate {
    let id: Int
    let messageCount: Int
    private var reader = LengthPrefixedReader()
    private(set) var verified = 0
    private(set) var mismatches = 0
    private(set) var closeError: UVError?
    var onFinished: (EchoClient) -> Void = { _ in }

    init(id: Int, messageCount: Int) {
        self.id = id
        self.messageCount = messageCount
    }

    /// Bytes that messages are cut from; a prime length keeps neighbouring messages different.
    private static let pattern: [UInt8] = (0..<4099).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 5) }

    /// The `index`th message of client `id`: its length and content depend on both.
    static func message(client id: Int, index: Int) -> [UInt8] {
        let length = (id &* 31 &+ index &* 17) % 1500 + 1
        let start = (id &* 257 &+ index &* 13) % (pattern.count - length)
        return Array(pattern[start..<start + length])
    }

    func start(_ connection: Connection) throws {
        connection.delegate = self
        try connection.startReading()
        for index in 0..<messageCount {
            try connection.write(LengthPrefixedReader.frame(Self.message(client: id, index: index)))
        }
    }

    func connection(_ connection: Connection, didRead bytes: Span<UInt8>) {
        reader.append(bytes)
        while let message = reader.nextMessage() {
            if message != Self.message(client: id, index: verified) { mismatches += 1 }
            verified += 1
        }
        if verified == messageCount {
            connection.close()
        }
    }

    func connectionDidClose(_ connection: Connection, error: UVError?) {
        closeError = error
        onFinished(self)
    }
}
