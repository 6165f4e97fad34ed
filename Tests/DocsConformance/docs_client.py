"""A HomeRPC client written only from docs/PROTOCOL.md and docs/API.md.

It shares nothing with the Swift or C code on purpose: check_docs.py uses it to find out whether a
stranger who reads only the documents gets what they promise. Protobuf is encoded and decoded by
hand (the standard library has no protobuf), which is all the checks need.
"""

import socket
import struct

# ---- protobuf wire format ----


def varint(n):
    if n < 0:
        n += 1 << 64  # negative int32/int64 values are sent as ten-byte varints
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def field_varint(number, value):
    return varint(number << 3) + varint(value)


def field_bytes(number, value):
    if isinstance(value, str):
        value = value.encode()
    return varint((number << 3) | 2) + varint(len(value)) + value


def _read_varint(buffer, index):
    value = shift = 0
    while True:
        byte = buffer[index]
        index += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, index


def decode(buffer):
    """A message as {field number: [values]}: ints for varints, bytes for everything length-delimited."""
    fields, index = {}, 0
    while index < len(buffer):
        key, index = _read_varint(buffer, index)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, index = _read_varint(buffer, index)
        elif wire_type == 2:
            length, index = _read_varint(buffer, index)
            value, index = bytes(buffer[index:index + length]), index + length
        elif wire_type == 1:
            value, index = buffer[index:index + 8], index + 8
        elif wire_type == 5:
            value, index = buffer[index:index + 4], index + 4
        else:
            raise ValueError("wire type %d" % wire_type)
        fields.setdefault(number, []).append(value)
    return fields


def signed(value):
    """An int32/int64 field's value as decoded (an unsigned varint) back to its sign."""
    return value - (1 << 64) if value >= 1 << 63 else value


# ---- frames (PROTOCOL.md, "Frame header") ----

SETTINGS, CALL_START, MESSAGE, CALL_END, CANCEL, CREDIT, PING, PONG, GOAWAY = range(1, 10)
END_STREAM = RETRYABLE = 0x01
PREFACE = b"HRPC\r\n\x00\x01"


def frame(frame_type, flags, stream, payload=b""):
    return struct.pack(">IBBI", len(payload), frame_type, flags, stream) + payload


def settings_frame(entries):
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", key, value) for key, value in entries))


def call_start(stream, method, timeout_ms=0, metadata=()):
    name = method.encode()
    payload = struct.pack(">H", len(name)) + name + struct.pack(">IH", timeout_ms, len(metadata))
    for key, value in metadata:
        key = key.encode()
        value = value.encode() if isinstance(value, str) else value
        payload += struct.pack(">B", len(key)) + key + struct.pack(">H", len(value)) + value
    return frame(CALL_START, 0, stream, payload)


class CallEnd:
    """What CALL_END said: the status code, its message, the decoded ErrorDetails and the flags."""

    def __init__(self, payload, flags):
        self.code, length = struct.unpack(">HH", payload[:4])
        self.message = payload[4:4 + length].decode()
        self.details = decode(payload[4 + length:])
        self.retryable = bool(flags & RETRYABLE)

    @property
    def homekit_code(self):
        codes = self.details.get(1)
        return signed(codes[0]) if codes else None

    @property
    def field(self):
        names = self.details.get(4)
        return names[0].decode() if names else None

    def __repr__(self):
        return "CallEnd(%d %r homekit=%r field=%r retryable=%r)" % (
            self.code, self.message, self.homekit_code, self.field, self.retryable)


class GoAway(Exception):
    def __init__(self, payload):
        self.last_stream, self.code = struct.unpack(">IH", payload[:6])
        self.message = payload[6:].decode()
        super().__init__("GOAWAY(%d, last stream %d, %r)" % (self.code, self.last_stream, self.message))


class Connection:
    """One connection: the preface and SETTINGS exchange, then calls on odd, growing stream ids."""

    def __init__(self, address, initial_stream_credit=64, max_frame_size=16 * 1024 * 1024, handshake=True,
                 tls=None, server_name="localhost"):
        """address: (host, port) for TCP, or a path for a Unix-domain socket. tls: an ssl.SSLContext
        for a server started with a certificate (PROTOCOL.md, "TLS"): everything goes inside it."""
        if isinstance(address, str):
            self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.socket.connect(address)
        else:
            self.socket = socket.create_connection(address)
        if tls is not None:
            self.socket = tls.wrap_socket(self.socket, server_hostname=server_name)
        self.socket.settimeout(10)
        self.buffer = b""
        self.set_aside = []
        self.next_stream = 1
        self.server_settings = {}
        if handshake:
            self.send(PREFACE + settings_frame([(1, max_frame_size), (2, initial_stream_credit)]))
            self.read_server_preface()
            frame_type, _, stream, payload = self.read_frame()
            assert frame_type == SETTINGS and stream == 0, (frame_type, stream)
            self.server_settings = dict(struct.unpack(">HI", payload[i:i + 6]) for i in range(0, len(payload), 6))

    def read_server_preface(self):
        preface = self.read_exactly(8)
        assert preface == PREFACE, preface

    def send(self, data):
        self.socket.sendall(data)

    def read_exactly(self, count):
        while len(self.buffer) < count:
            data = self.socket.recv(65536)
            if not data:
                raise EOFError("connection closed")
            self.buffer += data
        out, self.buffer = self.buffer[:count], self.buffer[count:]
        return out

    def read_frame(self):
        """The next frame from the socket, or the oldest one set aside by next_frame."""
        if self.set_aside:
            return self.set_aside.pop(0)
        return self._receive_frame()

    def _receive_frame(self):
        length, frame_type, flags, stream = struct.unpack(">IBBI", self.read_exactly(10))
        return frame_type, flags, stream, self.read_exactly(length)

    def next_frame(self, streams):
        """The next frame of one of these streams (or of the connection, stream 0). Frames of other
        streams are set aside for whoever reads them later, so that a unary call made while a stream
        is open does not lose the stream's messages."""
        for index, item in enumerate(self.set_aside):
            if item[2] == 0 or item[2] in streams:
                return self.set_aside.pop(index)
        while True:
            item = self._receive_frame()
            if item[2] == 0 or item[2] in streams:
                return item
            self.set_aside.append(item)

    def allocate_stream(self):
        stream, self.next_stream = self.next_stream, self.next_stream + 2
        return stream

    def start(self, method, request=b"", metadata=(), timeout_ms=0):
        stream = self.allocate_stream()
        self.send(call_start(stream, method, timeout_ms, metadata) + frame(MESSAGE, END_STREAM, stream, request))
        return stream

    def collect(self, streams):
        """Reads until each of the streams ended: {stream: ([messages], CallEnd)}. Answers PINGs."""
        messages = {stream: [] for stream in streams}
        ends = {}
        while len(ends) < len(streams):
            frame_type, flags, stream, payload = self.next_frame(streams)
            if frame_type == MESSAGE and stream in messages:
                messages[stream].append(payload)
            elif frame_type == CALL_END and stream in messages:
                ends[stream] = CallEnd(payload, flags)
            elif frame_type == PING:
                self.send(frame(PONG, 0, 0, payload))
            elif frame_type == GOAWAY:
                raise GoAway(payload)
        return {stream: (messages[stream], ends[stream]) for stream in streams}

    def unary(self, method, request=b"", metadata=(), timeout_ms=0):
        """(the response message or None, CallEnd)."""
        stream = self.start(method, request, metadata, timeout_ms)
        messages, end = self.collect([stream])[stream]
        return (messages[0] if messages else None), end

    def close(self):
        self.socket.close()


def bearer(token):
    return [("authorization", "Bearer " + token)]
