/// Appends frames to an output buffer, so that every frame produced while handling one read can leave
/// in a single write.
///
/// The encoder does not check the peer's maximum frame size: the sender compares a message against the
/// peer's SETTINGS before encoding it. Lengths that the layout cannot express (a method name over
/// 65,535 bytes, a metadata key over 255) are programmer errors and trap; status and GOAWAY messages,
/// which often quote user input, are cut at a character boundary instead.
public enum FrameEncoder {
    /// Appends `frame` to `buffer`.
    public static func encode(_ frame: Frame, into buffer: inout [UInt8]) {
        switch frame {
        case .preface(let preface):
            buffer.append(contentsOf: Preface.magic)
            buffer.writeUInt16(preface.version)
        case .settings(let settings):
            writeFrame(.settings, streamID: .connection, into: &buffer) { payload in
                for setting in settings.entries {
                    payload.writeUInt16(setting.id.rawValue)
                    payload.writeUInt32(setting.value)
                }
            }
        case .callStart(let streamID, let call):
            encodeCallStart(streamID: streamID, call, into: &buffer)
        case .message(let streamID, let bytes, let endStream):
            encodeMessage(streamID: streamID, payload: bytes, endStream: endStream, into: &buffer)
        case .callEnd(let streamID, let status):
            encodeCallEnd(streamID: streamID, status: status, into: &buffer)
        case .cancel(let streamID):
            writeFrame(.cancel, streamID: streamID, into: &buffer) { _ in }
        case .credit(let streamID, let increment):
            writeFrame(.credit, streamID: streamID, into: &buffer) { $0.writeUInt32(increment) }
        case .ping(let data):
            writeFrame(.ping, streamID: .connection, into: &buffer) { $0.writeUInt64(data) }
        case .pong(let data):
            writeFrame(.pong, streamID: .connection, into: &buffer) { $0.writeUInt64(data) }
        case .goAway(let goAway):
            writeFrame(.goAway, streamID: .connection, into: &buffer) { payload in
                payload.writeUInt32(goAway.lastStreamID.rawValue)
                payload.writeUInt16(goAway.code.rawValue)
                payload.append(contentsOf: clippedUTF8(goAway.message))
            }
        }
    }

    /// Appends a CALL_START frame without building a ``Frame`` first (a client's every call).
    public static func encodeCallStart(streamID: StreamID, _ call: CallStart, into buffer: inout [UInt8]) {
        writeFrame(.callStart, streamID: streamID, into: &buffer) { payload in
            writeCallStart(call, into: &payload)
        }
    }

    /// Appends a MESSAGE frame without building a ``Frame`` first (the hot path).
    public static func encodeMessage(
        streamID: StreamID,
        payload: [UInt8],
        endStream: Bool,
        into buffer: inout [UInt8]
    ) {
        // Concrete, not `some Collection`: called from other modules, a generic payload ran
        // unspecialised (metadata lookups and witness calls for every append, seen in profiles).
        encodeMessageHeader(streamID: streamID, payloadLength: payload.count, endStream: endStream, into: &buffer)
        buffer.append(contentsOf: payload)
    }

    /// Appends a MESSAGE frame's header only: the caller appends exactly `payloadLength` bytes next.
    public static func encodeMessageHeader(
        streamID: StreamID,
        payloadLength: Int,
        endStream: Bool,
        into buffer: inout [UInt8]
    ) {
        let header = FrameHeader(
            payloadLength: UInt32(payloadLength),
            type: .message,
            flags: endStream ? .endStream : [],
            streamID: streamID
        )
        header.write(to: &buffer)
    }

    /// Bytes of a CALL_END frame with status OK and no message or details.
    public static let okCallEndLength = FrameHeader.length + 4

    /// Appends a CALL_END frame with status OK, no message and no details (how nearly every call
    /// ends), in one append: its 14 bytes are laid out by the tuple `(UInt64, UInt32, UInt16)`,
    /// whose size is 14 with no padding.
    public static func encodeOKCallEnd(streamID: StreamID, into buffer: inout [UInt8]) {
        let headerFirst8 = UInt64(4) << 32 | UInt64(FrameType.callEnd.rawValue) << 24 | UInt64(streamID.rawValue >> 16)
        // The stream id's low half, then the code (OK is 0) and the message length (0).
        let streamIDLow16AndCode = UInt32(truncatingIfNeeded: streamID.rawValue) << 16 | UInt32(StatusCode.ok.rawValue)
        buffer.appendBytes(of: (headerFirst8.bigEndian, streamIDLow16AndCode.bigEndian, UInt16(0)))
    }

    /// Appends a unary call's answer: its response in a MESSAGE, then CALL_END with status OK, in
    /// one append (written as three, they cost about 270 instructions, a twentieth of a call).
    public static func encodeUnaryAnswer(streamID: StreamID, response: [UInt8], into buffer: inout [UInt8]) {
        encodeUnaryAnswer(streamID: streamID, responseLength: response.count, into: &buffer) { frames in
            response.withUnsafeBytes { frames.appendBytes(copying: $0) }
        }
    }

    /// Appends a unary call's answer, as ``encodeUnaryAnswer(streamID:response:into:)``, with a
    /// response of exactly `responseLength` bytes that `write` writes in place.
    public static func encodeUnaryAnswer(
        streamID: StreamID,
        responseLength: Int,
        into buffer: inout [UInt8],
        writingWith write: (inout OutputSpan<UInt8>) -> Void
    ) {
        let streamIDHigh = UInt64(streamID.rawValue >> 16)
        let streamIDLow16 = UInt16(truncatingIfNeeded: streamID.rawValue)
        buffer.append(addingCapacity: FrameHeader.length + responseLength + okCallEndLength) { frames in
            // The MESSAGE header: `(UInt64, UInt16)` is 10 bytes, as laid out.
            let first8 = UInt64(responseLength) << 32 | UInt64(FrameType.message.rawValue) << 24 | streamIDHigh
            frames.appendBytes(of: (first8.bigEndian, streamIDLow16.bigEndian))
            let start = frames.count
            write(&frames)
            // A wrong length would shift every later frame on the connection: never send it.
            precondition(
                frames.count - start == responseLength,
                "a message announced \(responseLength) bytes and wrote \(frames.count - start)"
            )
            // The OK CALL_END, laid out as in ``encodeOKCallEnd(streamID:into:)``.
            let callEndFirst8 = UInt64(4) << 32 | UInt64(FrameType.callEnd.rawValue) << 24 | streamIDHigh
            let streamIDLow16AndCode = UInt32(streamIDLow16) << 16 | UInt32(StatusCode.ok.rawValue)
            frames.appendBytes(of: (callEndFirst8.bigEndian, streamIDLow16AndCode.bigEndian, UInt16(0)))
        }
    }

    /// Appends a CALL_END frame without building a ``Frame`` first (every call ends with one).
    public static func encodeCallEnd(streamID: StreamID, status: CallStatus, into buffer: inout [UInt8]) {
        // The usual status (OK, no message, no details) skips building the message's bytes.
        let message = status.message.isEmpty ? [] : clippedUTF8(status.message)
        let header = FrameHeader(
            payloadLength: UInt32(4 + message.count + status.details.count),
            type: .callEnd,
            flags: status.isRetryable ? .retryable : [],
            streamID: streamID
        )
        header.write(to: &buffer)
        // Code and message length, big-endian, in one append.
        let codeAndLength = UInt32(status.code.rawValue) << 16 | UInt32(message.count)
        buffer.appendBytes(of: codeAndLength.bigEndian)
        if !message.isEmpty { buffer.append(contentsOf: message) }
        if !status.details.isEmpty { buffer.append(contentsOf: status.details) }
    }

    /// Appends a frame whose payload `body` writes, then fills in the header's length.
    private static func writeFrame(
        _ type: FrameType,
        flags: FrameFlags = [],
        streamID: StreamID,
        into buffer: inout [UInt8],
        body: (inout [UInt8]) -> Void
    ) {
        let headerStart = buffer.count
        FrameHeader(payloadLength: 0, type: type, flags: flags, streamID: streamID).write(to: &buffer)
        body(&buffer)
        buffer.setUInt32(UInt32(buffer.count - headerStart - FrameHeader.length), at: headerStart)
    }

    private static func writeCallStart(_ call: CallStart, into payload: inout [UInt8]) {
        // Every call of a client sends one: no copy of the name, and the integers in one append
        // each (a pipelining client spent a visible share of its time here).
        let methodLength = call.method.utf8.count
        precondition(methodLength <= WireLimits.maxMethodNameLength, "method name too long")
        precondition(call.metadata.count <= WireLimits.maxMetadataEntries, "too many metadata entries")
        payload.appendBytes(of: UInt16(methodLength).bigEndian)
        payload.append(contentsOf: call.method.utf8)
        payload.appendBytes(of: (call.timeoutMilliseconds.bigEndian, UInt16(call.metadata.count).bigEndian))
        for entry in call.metadata {
            let key = Array(entry.key.utf8)
            precondition(key.count <= WireLimits.maxMetadataKeyLength, "metadata key too long: \(entry.key)")
            precondition(entry.value.count <= WireLimits.maxMetadataValueLength, "metadata value too long")
            payload.append(UInt8(key.count))
            payload.append(contentsOf: key)
            payload.writeUInt16(UInt16(entry.value.count))
            payload.append(contentsOf: entry.value)
        }
    }

    /// The UTF-8 bytes of `text`, cut to at most ``WireLimits/maxStatusMessageLength`` without
    /// splitting a character's encoding.
    static func clippedUTF8(_ text: String, to limit: Int = WireLimits.maxStatusMessageLength) -> [UInt8] {
        var bytes = Array(text.utf8)
        guard bytes.count > limit else { return bytes }
        var end = max(0, limit)
        // Back up over continuation bytes (10xxxxxx) to the start of the cut scalar.
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        bytes.removeSubrange(end...)
        return bytes
    }
}
