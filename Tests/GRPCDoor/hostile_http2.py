#!/usr/bin/env python3
"""Hostile peers against homed's gRPC door, each case on a connection of its own, raw bytes out and
the answer read frame by frame (headers with hpack): every case gets its precise answer (a gRPC status, an HTTP
status, or a GOAWAY with the right HTTP/2 error code), a connection opened before the first case is
served after each one, and homed's resident memory stays bounded.

    hostile_http2.py HOST GRPC_PORT HOMERPC_PORT HOMED_PID

Run by clients/python/test.sh with the venv it makes (grpcio, hpack).
"""

import os
import socket
import struct
import sys
import time

import grpc
import hpack
from grpc_health.v1 import health_pb2, health_pb2_grpc

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, CONTINUATION = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7, 0x9
END_STREAM, END_HEADERS = 0x1, 0x4
PROTOCOL_ERROR, FRAME_SIZE_ERROR, COMPRESSION_ERROR, ENHANCE_YOUR_CALM = 0x1, 0x6, 0x9, 0xB

failures = []


def check(condition: bool, what: str) -> None:
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def settings(**values: int) -> bytes:
    ids = {"header_table_size": 1, "initial_window_size": 4, "max_frame_size": 5}
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", ids[k], v) for k, v in values.items()))


def request_headers(path: str = "/grpc.health.v1.Health/Check", content_type: str = "application/grpc", extra=()):
    fields = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "homed")]
    fields += [("content-type", content_type), ("te", "trailers")] + list(extra)
    return fields


def grpc_message(payload: bytes = b"", flag: int = 0, length: int | None = None) -> bytes:
    return bytes([flag]) + struct.pack(">I", len(payload) if length is None else length) + payload


class Peer:
    """One raw connection: sends what the case says, and reads the server's frames (headers decoded
    with hpack, in order, as the server's HPACK encoder wrote them)."""

    def __init__(self, host: str, port: int, handshake: bool = True, **client_settings: int) -> None:
        self.socket = socket.create_connection((host, port), timeout=5)
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.received = b""
        self.block = b""  # a header block being read (HEADERS, then CONTINUATIONs)
        self.headers_by_stream = {}  # stream -> every header block received on it, decoded
        self.ended = set()  # streams the server ended (END_STREAM) or reset
        self.reset = set()
        self.goaway_code = None
        self.closed = False
        if handshake:
            self.send(PREFACE + settings(**client_settings) + frame(SETTINGS, 0x1, 0, b""))

    def send(self, data: bytes) -> None:
        try:
            self.socket.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            self.closed = True

    def headers(self, stream: int, fields, end_stream: bool = False) -> bytes:
        flags = END_HEADERS | (END_STREAM if end_stream else 0)
        return frame(HEADERS, flags, stream, self.encoder.encode(fields))

    def take_frames(self) -> None:
        while len(self.received) >= 9:
            length = int.from_bytes(self.received[:3], "big")
            if len(self.received) < 9 + length:
                return
            kind, flags = self.received[3], self.received[4]
            stream = int.from_bytes(self.received[5:9], "big") & 0x7FFFFFFF
            payload = self.received[9 : 9 + length]
            self.received = self.received[9 + length :]
            if kind in (HEADERS, CONTINUATION):
                if kind == HEADERS:
                    padding = payload[0] if flags & 0x8 else 0
                    payload = payload[(1 if flags & 0x8 else 0) + (5 if flags & 0x20 else 0) : len(payload) - padding]
                self.block += payload
                if flags & END_HEADERS:
                    fields = dict(self.decoder.decode(self.block))
                    self.headers_by_stream.setdefault(stream, []).append(fields)
                    self.block = b""
            if kind in (HEADERS, DATA) and flags & END_STREAM:
                self.ended.add(stream)
            if kind == RST_STREAM:
                self.ended.add(stream)
                self.reset.add(stream)
            if kind == GOAWAY:
                self.goaway_code = int.from_bytes(payload[4:8], "big")

    def read(self, seconds: float = 5.0, until=None) -> None:
        """Reads the server's frames for up to `seconds`, or until the connection closes or `until`
        holds."""
        deadline = time.time() + seconds
        while time.time() < deadline and not self.closed:
            if until and until(self):
                break
            self.socket.settimeout(max(0.01, deadline - time.time()))
            try:
                data = self.socket.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                self.closed = True
                break
            if not data:
                self.closed = True
                break
            self.received += data
            self.take_frames()

    def goaway(self):
        return self.goaway_code

    def grpc_status(self, stream: int):
        """The `grpc-status` (or `:status` when there is none) the stream ended with."""
        for fields in self.headers_by_stream.get(stream, []):
            if "grpc-status" in fields:
                return int(fields["grpc-status"]), fields.get("grpc-message", "")
            if fields.get(":status", "200") != "200":
                return "http " + fields[":status"], ""
        return None, ""

    def close(self) -> None:
        self.socket.close()


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as file:
        return next(int(line.split()[1]) for line in file if line.startswith("VmRSS:"))


def main() -> int:
    host, grpc_port, homerpc_port, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    bystander = grpc.insecure_channel(f"{host}:{grpc_port}")
    health = health_pb2_grpc.HealthStub(bystander)
    health.Check(health_pb2.HealthCheckRequest(), timeout=5)
    rss_before = rss_kib(pid)

    def served_meanwhile(case: str) -> None:
        answer = health.Check(health_pb2.HealthCheckRequest(), timeout=5)
        check(answer.status == health_pb2.HealthCheckResponse.SERVING, f"{case}: another connection is served")

    def status_case(name: str, stream_frames, expected_status, message_part: str = "") -> None:
        peer = Peer(host, grpc_port)
        peer.send(b"".join(stream_frames(peer)))
        peer.read(until=lambda peer: 1 in peer.ended)
        status, message = peer.grpc_status(1)
        check(
            status == expected_status and message_part in message,
            f"{name}: {expected_status} (got {status} {message!r})",
        )
        peer.close()
        served_meanwhile(name)

    def goaway_case(name: str, hostile: bytes, expected_code: int, handshake: bool = True, **client_settings) -> None:
        peer = Peer(host, grpc_port, handshake=handshake, **client_settings)
        peer.send(hostile)
        peer.read(seconds=10, until=lambda peer: peer.goaway_code is not None)
        check(peer.goaway_code == expected_code, f"{name}: GOAWAY {expected_code:#x} (got {peer.goaway_code})")
        peer.close()
        served_meanwhile(name)

    health_request = grpc_message(health_pb2.HealthCheckRequest().SerializeToString())

    # gRPC's framing broken inside a well-formed stream: a status each, the connection goes on.
    status_case(
        "a message cut short (its prefix says 100 bytes, 10 came)",
        lambda p: [p.headers(1, request_headers()), frame(DATA, END_STREAM, 1, grpc_message(b"x" * 10, length=100))],
        3,
        "cut short",
    )
    status_case(
        "two request messages",
        lambda p: [p.headers(1, request_headers()), frame(DATA, END_STREAM, 1, health_request * 2)],
        3,
        "exactly one message",
    )
    status_case(
        "no request message",
        lambda p: [frame(HEADERS, END_HEADERS | END_STREAM, 1, p.encoder.encode(request_headers()))],
        3,
        "exactly one message",
    )
    status_case(
        "a compressed-flag message without grpc-encoding",
        lambda p: [p.headers(1, request_headers()), frame(DATA, END_STREAM, 1, grpc_message(b"", flag=1))],
        13,
        "compressed",
    )
    status_case(
        "grpc-encoding gzip",
        lambda p: [
            p.headers(1, request_headers(extra=[("grpc-encoding", "gzip")])),
            frame(DATA, END_STREAM, 1, health_request),
        ],
        12,
        "gzip",
    )
    status_case(
        "an unknown content-type",
        lambda p: [p.headers(1, request_headers(content_type="text/plain")), frame(DATA, END_STREAM, 1, health_request)],
        "http 415",
    )
    status_case(
        "an unknown method",
        lambda p: [p.headers(1, request_headers(path="/home.v1.Nope/Nothing")), frame(DATA, END_STREAM, 1, health_request)],
        12,
        "unknown method",
    )
    status_case(
        "a malformed grpc-timeout",
        lambda p: [
            p.headers(1, request_headers(extra=[("grpc-timeout", "soon")])),
            frame(DATA, END_STREAM, 1, health_request),
        ],
        3,
        "grpc-timeout",
    )
    # A header block past the limit (in HEADERS and CONTINUATIONs): refused, the connection goes on.
    peer = Peer(host, grpc_port)
    block = peer.encoder.encode(request_headers(extra=[(f"x-pad-{i}", "v" * 1000) for i in range(40)]))
    pieces = [block[i : i + 16000] for i in range(0, len(block), 16000)]
    hostile = frame(HEADERS, 0, 1, pieces[0])
    for index, piece in enumerate(pieces[1:], start=1):
        hostile += frame(CONTINUATION, END_HEADERS if index == len(pieces) - 1 else 0, 1, piece)
    peer.send(hostile + frame(DATA, END_STREAM, 1, health_request))
    peer.read(until=lambda peer: 1 in peer.ended)
    status, message = peer.grpc_status(1)
    check(status == 8, f"a header list of 40 KB: 8 (got {status} {message!r}, reset: {1 in peer.reset})")
    peer.close()
    served_meanwhile("a header list of 40 KB")

    # HTTP/2 itself broken: a GOAWAY with the error code that says how.
    goaway_case("DATA on stream 0", frame(DATA, 0, 0, b"x"), PROTOCOL_ERROR)
    goaway_case("a frame larger than SETTINGS_MAX_FRAME_SIZE", frame(DATA, 0, 1, b"x" * 20000), FRAME_SIZE_ERROR)
    # A HEADERS on a lower stream id than one already opened: nghttp2 cannot tell it from a stream
    # it has closed (RFC 9113 lets a peer send on one it has not yet seen closed), so it is ignored:
    # no answer on it, and the connection goes on.
    peer = Peer(host, grpc_port)
    peer.send(peer.headers(5, request_headers()) + peer.headers(3, request_headers()) + frame(DATA, END_STREAM, 5, health_request))
    peer.read(until=lambda peer: 5 in peer.ended)
    check(
        peer.grpc_status(5)[0] == 0 and peer.grpc_status(3)[0] is None and peer.goaway_code is None,
        f"a stream id that goes back: ignored (stream 5: {peer.grpc_status(5)[0]}, stream 3: {peer.grpc_status(3)[0]})",
    )
    peer.close()
    served_meanwhile("a stream id that goes back")
    peer = Peer(host, grpc_port)
    goaway_case("an even (server) stream id", peer.headers(2, request_headers()), PROTOCOL_ERROR)
    peer.close()
    # HPACK abuse: a table size update past the 4,096 bytes announced, an index past the table.
    goaway_case(
        "an HPACK table size update past SETTINGS_HEADER_TABLE_SIZE",
        frame(HEADERS, END_HEADERS, 1, b"\x3f\xe1\xff\xff\x03" + hpack.Encoder().encode(request_headers())),
        COMPRESSION_ERROR,
    )
    goaway_case("an HPACK index past the table", frame(HEADERS, END_HEADERS, 1, b"\xff\xff\x7f"), COMPRESSION_ERROR)
    # Floods: CONTINUATION, SETTINGS, PING, RST_STREAM ("rapid reset").
    goaway_case(
        "a CONTINUATION flood",
        frame(HEADERS, 0, 1, hpack.Encoder().encode(request_headers())) + frame(CONTINUATION, 0, 1) * 10_000,
        ENHANCE_YOUR_CALM,
    )
    peer = Peer(host, grpc_port)
    rapid = b""
    encoder = hpack.Encoder()
    for stream in range(1, 2 * 3000, 2):
        rapid += frame(HEADERS, END_HEADERS, stream, encoder.encode(request_headers()))
        rapid += frame(RST_STREAM, 0, stream, struct.pack(">I", 0x8))
    peer.close()
    goaway_case("rapid reset: 3,000 streams opened and reset", rapid, ENHANCE_YOUR_CALM)

    # A peer that never reads while it makes the server answer: the server stops reading it, and
    # its SETTINGS and PING acknowledgements are bounded (past them: GOAWAY, close).
    peer = Peer(host, grpc_port, initial_window_size=0)
    peer.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    flood = frame(PING, 0, 0, b"\0" * 8) * 200_000 + settings(max_frame_size=16384) * 50_000
    started = time.time()
    sent = 0
    peer.socket.settimeout(1)
    while sent < len(flood) and time.time() - started < 20:
        try:
            sent += peer.socket.send(flood[sent : sent + 65536])
        except socket.timeout:
            break
        except (BrokenPipeError, ConnectionResetError):
            break
    peer.close()
    served_meanwhile("a PING and SETTINGS flood that reads nothing")

    # Streams never read: the client's window is 0, the server holds the answers up to its bounds.
    peer = Peer(host, grpc_port, initial_window_size=0)
    encoder = hpack.Encoder()
    streams = b""
    for stream in range(1, 2 * 100, 2):
        streams += frame(HEADERS, END_HEADERS, stream, encoder.encode(request_headers(path="/grpc.health.v1.Health/Watch")))
        streams += frame(DATA, END_STREAM, stream, health_request)
    peer.send(streams)
    time.sleep(1)
    served_meanwhile("100 Watch streams never read")
    peer.close()

    # Not HTTP/2 at all: our own protocol's preface, or HTTP/1.1, on the gRPC port; HTTP/2 on ours.
    for name, hello in [("our protocol's preface", b"HRPC\r\n\x00\x01"), ("HTTP/1.1", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")]:
        peer = Peer(host, grpc_port, handshake=False)
        peer.send(hello)
        peer.read(seconds=5)
        check(peer.closed, f"{name} on the gRPC port: the connection is closed")
        peer.close()
        served_meanwhile(name)
    peer = Peer(host, homerpc_port, handshake=False)
    peer.send(PREFACE + settings())
    peer.socket.settimeout(5)
    answer = b""
    try:
        while chunk := peer.socket.recv(4096):
            answer += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    check(answer == b"", f"HTTP/2 on our protocol's port: closed without an answer (got {answer[:16]!r})")
    peer.close()

    grown = rss_kib(pid) - rss_before
    check(grown < 64 * 1024, f"homed's resident memory grew {grown // 1024} MiB over every case (bound: 64 MiB)")
    bystander.close()
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
