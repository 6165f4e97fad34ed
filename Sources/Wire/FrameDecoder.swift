/// Turns a byte stream, arriving in chunks of any size, into frames.
///
/// Bytes are appended with ``append(_:)``; ``nextFrame()`` returns a frame once all of its bytes are
/// buffered and `nil` while it needs more. Checks run as early as the bytes allow: the magic on the
/// first byte, and the length, type and stream id as soon as the 10-byte header is complete, so an
/// oversized or bogus frame is refused before any of its payload is buffered.
///
/// Buffering: consumed bytes stay in front of `readIndex` until the next append compacts them away, so
/// the buffer never holds more than one partial frame plus the chunk just appended, however many
/// frames pass through.
///
/// The first ``WireError`` is sticky: every later call throws it again, since the stream can no
/// longer be trusted.
public struct FrameDecoder: Sendable {
    /// Largest payload accepted, in bytes.
    public var maxFrameSize: Int

    /// Buffer capacity kept between frames; more is released once the buffer empties.
    private static let retainedCapacity = 64 * 1024

    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var state: State
    /// The method of the last CALL_START, returned again while the peer keeps calling it.
    public private(set) var lastMethod = ""
    /// How many times ``lastMethod`` has changed: a server that caches what it looked up for a
    /// method compares this number instead of the name.
    public private(set) var methodChanges: UInt64 = 0

    private enum State: Sendable {
        /// Waiting for the 8-byte preface; goes to `frames` or `failed`.
        case awaitingPreface
        /// Reading frames; goes to `failed` only.
        case frames
        /// A violation was found; terminal.
        case failed(WireError)
    }

    /// - Parameters:
    ///   - maxFrameSize: the largest payload to accept (what this side announces in SETTINGS).
    ///   - expectsPreface: whether the stream starts with the peer's ``Preface``.
    public init(maxFrameSize: Int = WireLimits.defaultMaxFrameSize, expectsPreface: Bool = true) {
        self.maxFrameSize = maxFrameSize
        self.state = expectsPreface ? .awaitingPreface : .frames
    }

    /// Bytes received but not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Copies `bytes` into the buffer; they need stay valid only during this call.
    public mutating func append(_ bytes: Span<UInt8>) {
        compact()
        bytes.withUnsafeBufferPointer { buffer.append(contentsOf: $0) }
    }

    /// Copies `bytes` into the buffer.
    public mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, or `nil` if more bytes are needed.
    /// - Throws: ``WireError`` when the input violates the framing (and on every call after that).
    public mutating func nextFrame() throws(WireError) -> Frame? {
        do throws(WireError) {
            switch state {
            case .failed(let error):
                throw error
            case .awaitingPreface:
                guard let preface = try decodePreface() else { return nil }
                state = .frames
                return .preface(preface)
            case .frames:
                return try decodeFrame()
            }
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// The header of the next frame once all of the frame is buffered, validated as by
    /// ``nextFrame()``, without taking the frame: `nil` while bytes are missing and before the
    /// preface has been taken (``nextFrame()`` yields it). The caller then takes the frame with
    /// ``takeCallStart(_:)``, ``takeMessagePayload(_:)`` or ``nextFrame()``: the first two build no
    /// ``Frame`` for the two frames every call sends.
    /// - Throws: ``WireError`` for a bad header (and on every call after that).
    public mutating func nextCompleteHeader() throws(WireError) -> FrameHeader? {
        switch state {
        case .failed(let error):
            throw error
        case .awaitingPreface:
            return nil
        case .frames:
            do throws(WireError) {
                return try completeHeader()
            } catch {
                state = .failed(error)
                throw error
            }
        }
    }

    /// Takes the CALL_START frame whose header ``nextCompleteHeader()`` just returned.
    public mutating func takeCallStart(_ header: FrameHeader) throws(WireError) -> CallStart {
        let options = try takeCallOptions(header)
        return CallStart(method: lastMethod, options)
    }

    /// Takes the CALL_START frame whose header ``nextCompleteHeader()`` just returned, except for
    /// its method, which is then ``lastMethod`` (a name that repeats is neither copied nor retained).
    public mutating func takeCallOptions(_ header: FrameHeader) throws(WireError) -> CallStartOptions {
        precondition(header.type == .callStart, "takeCallOptions(_:) given a \(header.type.name) header")
        var reader = PayloadReader(range: payloadRange(of: header), type: .callStart)
        do throws(WireError) {
            let options = try decodeCallStart(&reader)
            consume(FrameHeader.length + Int(header.payloadLength))
            return options
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// Takes the MESSAGE frame whose header ``nextCompleteHeader()`` just returned: its payload,
    /// in place in the decoder's buffer (no copy). Use it before the next ``append(_:)``: holding
    /// it longer is safe but makes that append copy the buffer.
    public mutating func takeMessagePayload(_ header: FrameHeader) -> ArraySlice<UInt8> {
        precondition(header.type == .message, "takeMessagePayload(_:) given a \(header.type.name) header")
        let payload = buffer[payloadRange(of: header)]
        consume(FrameHeader.length + Int(header.payloadLength))
        return payload
    }

    /// Drops the frame whose header ``nextCompleteHeader()`` just returned.
    public mutating func skipFrame(_ header: FrameHeader) {
        consume(FrameHeader.length + Int(header.payloadLength))
    }

    /// Call when the input has ended: throws ``WireError/truncatedFrame(bufferedBytes:)`` if a frame was
    /// left incomplete.
    public func finish() throws(WireError) {
        if case .failed(let error) = state { throw error }
        guard bufferedByteCount == 0 else { throw .truncatedFrame(bufferedBytes: bufferedByteCount) }
    }

    private mutating func decodePreface() throws(WireError) -> Preface? {
        let available = bufferedByteCount
        // Compare what has arrived so far, so a stranger is refused on its first byte.
        for offset in 0..<min(available, Preface.magic.count)
        where buffer[readIndex + offset] != Preface.magic[offset] {
            throw .badMagic
        }
        guard available >= Preface.length else { return nil }
        let version = buffer.getUInt16(at: readIndex + Preface.magic.count)
        guard version == Preface.currentVersion else { throw .unsupportedVersion(version) }
        consume(Preface.length)
        return Preface(version: version)
    }

    private mutating func decodeFrame() throws(WireError) -> Frame? {
        guard let header = try completeHeader() else { return nil }
        let frame = try decodePayload(of: header, range: payloadRange(of: header))
        consume(FrameHeader.length + Int(header.payloadLength))
        return frame
    }

    /// The next frame's header, once the whole frame is buffered.
    private func completeHeader() throws(WireError) -> FrameHeader? {
        guard bufferedByteCount >= FrameHeader.length else {
            // Nearly always nothing is buffered here (every frame read was taken): no call then.
            if bufferedByteCount >= 4, let error = oversizedLengthError() { throw error }
            return nil
        }
        let header = try decodeHeader(at: readIndex)
        guard bufferedByteCount >= FrameHeader.length + Int(header.payloadLength) else { return nil }
        return header
    }

    /// The error for a frame at `readIndex` whose length (its first 4 bytes) is over the limit,
    /// named for what it is: a second preface when those bytes start the magic. `nil` when the
    /// length fits, and while a start of the magic waits for the rest of it, so that the error is
    /// the same however the bytes arrive. Checked on a partial header too: a peer that sends only a
    /// second preface (8 bytes), or only a huge length, would otherwise hold its connection until
    /// a timeout.
    @inline(never)
    private func oversizedLengthError() -> WireError? {
        let length = buffer[readIndex..<readIndex + 4].reduce(0) { $0 << 8 | Int($1) }
        guard length > maxFrameSize else { return nil }
        let magicBytes = min(bufferedByteCount, Preface.magic.count)
        guard buffer[readIndex..<readIndex + magicBytes].elementsEqual(Preface.magic.prefix(magicBytes)) else {
            return .frameTooLarge(limit: maxFrameSize, actual: length)
        }
        return magicBytes == Preface.magic.count ? .secondPreface : nil
    }

    /// Where the payload of the frame at `readIndex` lies in the buffer.
    private func payloadRange(of header: FrameHeader) -> Range<Int> {
        let start = readIndex + FrameHeader.length
        return start..<start + Int(header.payloadLength)
    }

    /// Validates everything the header alone can tell (the frame at `readIndex`, which `index` is).
    private func decodeHeader(at index: Int) throws(WireError) -> FrameHeader {
        // The ten bytes as two bounds-checked loads of the buffer's bytes (a word and a half-word)
        // instead of ten checked subscripts. Any bit pattern is a valid integer, so the loads are
        // safe despite their name.
        let bytes = buffer.span.bytes
        let first8 = UInt64(bigEndian: bytes.unsafeLoadUnaligned(fromByteOffset: index, as: UInt64.self))
        let last2 = UInt16(bigEndian: bytes.unsafeLoadUnaligned(fromByteOffset: index + 8, as: UInt16.self))
        let length = Int(first8 >> 32)
        guard length <= maxFrameSize else {
            // The whole header is buffered, so the magic is decided either way.
            throw oversizedLengthError() ?? .frameTooLarge(limit: maxFrameSize, actual: length)
        }
        let typeByte = UInt8(truncatingIfNeeded: first8 >> 24)
        guard let type = FrameType(rawValue: typeByte) else { throw .unknownFrameType(typeByte) }
        let streamID = StreamID(UInt32(truncatingIfNeeded: first8) << 16 | UInt32(last2))
        if type.isConnectionFrame {
            guard streamID == .connection else { throw .unexpectedStreamID(type, streamID) }
        } else {
            guard streamID != .connection else { throw .missingStreamID(type) }
        }
        return FrameHeader(
            payloadLength: UInt32(length),
            type: type,
            flags: FrameFlags(rawValue: UInt8(truncatingIfNeeded: first8 >> 16)),
            streamID: streamID
        )
    }

    private mutating func decodePayload(of header: FrameHeader, range: Range<Int>) throws(WireError) -> Frame {
        var reader = PayloadReader(range: range, type: header.type)
        let streamID = header.streamID
        switch header.type {
        case .settings:
            return .settings(try decodeSettings(&reader))
        case .callStart:
            let options = try decodeCallStart(&reader)
            return .callStart(streamID, CallStart(method: lastMethod, options))
        case .message:
            return .message(
                streamID,
                payload: reader.readRest(in: buffer),
                endStream: header.flags.contains(.endStream)
            )
        case .callEnd:
            let code = StatusCode(rawValue: try reader.readUInt16(in: buffer))
            let message = try reader.readString(Int(try reader.readUInt16(in: buffer)), in: buffer)
            let details = reader.readRest(in: buffer)
            let status = CallStatus(
                code: code,
                message: message,
                details: details,
                isRetryable: header.flags.contains(.retryable)
            )
            return .callEnd(streamID, status)
        case .cancel:
            try expectLength(0, of: header)
            return .cancel(streamID)
        case .credit:
            try expectLength(4, of: header)
            let increment = try reader.readUInt32(in: buffer)
            guard increment > 0 else { throw .zeroCreditIncrement(streamID) }
            return .credit(streamID, increment: increment)
        case .ping:
            try expectLength(8, of: header)
            return .ping(try reader.readUInt64(in: buffer))
        case .pong:
            try expectLength(8, of: header)
            return .pong(try reader.readUInt64(in: buffer))
        case .goAway:
            let lastStreamID = StreamID(try reader.readUInt32(in: buffer))
            let code = StatusCode(rawValue: try reader.readUInt16(in: buffer))
            return .goAway(
                GoAway(lastStreamID: lastStreamID, code: code, message: try reader.readRestAsString(in: buffer))
            )
        }
    }

    private func decodeSettings(_ reader: inout PayloadReader) throws(WireError) -> Settings {
        guard reader.remaining % Setting.encodedLength == 0 else {
            throw .invalidPayloadLength(.settings, reader.remaining)
        }
        var entries: [Setting] = []
        entries.reserveCapacity(reader.remaining / Setting.encodedLength)
        while reader.remaining > 0 {
            let id = SettingID(rawValue: try reader.readUInt16(in: buffer))
            let value = try reader.readUInt32(in: buffer)
            guard id.accepts(value) else { throw .invalidSettingValue(id, value) }
            entries.append(Setting(id, value))
        }
        return Settings(entries)
    }

    /// Decodes a CALL_START's payload: its method into ``lastMethod``, the rest returned.
    private mutating func decodeCallStart(_ reader: inout PayloadReader) throws(WireError) -> CallStartOptions {
        let methodLength = Int(try reader.readUInt16(in: buffer))
        if !(try reader.skip(methodLength, in: buffer, ifEqualTo: lastMethod)) {
            lastMethod = try reader.readString(methodLength, in: buffer)
            methodChanges &+= 1
        }
        let timeout = try reader.readUInt32(in: buffer)
        let count = Int(try reader.readUInt16(in: buffer))
        var metadata: [MetadataEntry] = []
        // Most calls carry none: even reserving no room costs a call into the array's slow path.
        if count > 0 {
            let mostKept = WireLimits.maxMetadataSize / WireLimits.metadataEntryOverhead
            metadata.reserveCapacity(min(count, reader.remaining / 3, mostKept))
        }
        // Every entry is read (and its key checked as UTF-8: the frame must be valid whatever its
        // size), but only those within the limit are kept: the call is refused anyway.
        var size = 0
        for _ in 0..<count {
            let keyLength = Int(try reader.readUInt8(in: buffer))
            let key = try reader.readString(keyLength, in: buffer)
            let valueLength = Int(try reader.readUInt16(in: buffer))
            size += CallStartOptions.metadataSize(keyLength: keyLength, valueLength: valueLength)
            guard size <= WireLimits.maxMetadataSize else {
                try reader.skip(valueLength)
                continue
            }
            metadata.append(MetadataEntry(key: key, value: try reader.readBytes(valueLength, in: buffer)))
        }
        try reader.expectEnd()
        return CallStartOptions(
            timeoutMilliseconds: timeout,
            metadata: metadata,
            exceedsMetadataLimit: size > WireLimits.maxMetadataSize
        )
    }

    private func expectLength(_ length: Int, of header: FrameHeader) throws(WireError) {
        guard header.payloadLength == length else {
            throw .invalidPayloadLength(header.type, Int(header.payloadLength))
        }
    }

    /// Consumed bytes stay in the buffer (a payload taken in place may still be in use) until
    /// ``releaseConsumedBytes()`` or the next append.
    private mutating func consume(_ count: Int) {
        readIndex += count
    }

    /// Empties the buffer if every byte in it has been taken: call it once the frames taken are no
    /// longer in use (after handling a read). A small buffer is kept for the next read; the room a
    /// single large frame needed is given back.
    public mutating func releaseConsumedBytes() {
        guard readIndex > 0, readIndex == buffer.count else { return }
        buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
        readIndex = 0
    }

    /// Drops consumed bytes before appending, once they are the larger part of the buffer, so that
    /// compaction costs amortized O(1) per byte.
    private mutating func compact() {
        releaseConsumedBytes()
        guard readIndex > 0, readIndex >= buffer.count - readIndex else { return }
        buffer.removeSubrange(0..<readIndex)
        readIndex = 0
    }
}
