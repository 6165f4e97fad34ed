"""What docs/PROTOCOL.md promises, checked through docs_client.py: framing, SETTINGS, calls and
streams, protocol errors, and (against a homed of their own) liveness and limits.
"""

import os
import socket
import struct
import tempfile
import time
import uuid

from docs_client import (CALL_END, CALL_START, CANCEL, CREDIT, END_STREAM, GOAWAY, MESSAGE, PING, PONG, PREFACE,
                         Connection, GoAway, bearer, call_start, decode, field_bytes, field_varint, frame,
                         settings_frame)
from harness import (DEADLINE_EXCEEDED, HOME, INVALID_ARGUMENT, OK, RESOURCE_EXHAUSTED, UNAVAILABLE, UNIMPLEMENTED,
                     Server, check, message_field, read_messages)


def check_framing(server):
    connection = Connection(server.address)
    check("SETTINGS: the server announces MAX_FRAME_SIZE 1 MiB, MAX_CONCURRENT_STREAMS 100, INITIAL_STREAM_CREDIT 1 "
          "(\"A whole unary call\")", connection.server_settings == {1: 1048576, 3: 100, 2: 1},
          connection.server_settings)
    response, end = connection.unary("home.v1.Health/Check")
    check("Authentication: Health/Check answers without a token, SERVING",
          end.code == OK and decode(response) == {1: [1]}, (end, response))
    connection.send(frame(PING, 0, 0, b"12345678"))
    frame_type, _, _, payload = connection.read_frame()
    check("PING is answered by a PONG with its 8 bytes", (frame_type, payload) == (PONG, b"12345678"),
          (frame_type, payload))
    _, end = connection.unary(HOME + "NoSuchMethod")
    check("a call to no such method: UNIMPLEMENTED", end.code == UNIMPLEMENTED, end)

    stream = connection.allocate_stream()
    connection.send(call_start(stream, "home.v1.Health/Check", timeout_ms=50))
    started = time.monotonic()
    _, end = connection.collect([stream])[stream]
    check("Deadlines: a 50 ms call whose request never comes ends DEADLINE_EXCEEDED in time",
          end.code == DEADLINE_EXCEEDED and time.monotonic() - started < 1, end)
    stream = connection.allocate_stream()
    connection.send(call_start(stream, "home.v1.Health/Check") + frame(MESSAGE, 0, stream))
    _, end = connection.collect([stream])[stream]
    check("a request without END_STREAM: INVALID_ARGUMENT", end.code == INVALID_ARGUMENT, end)
    _, end = connection.unary("home.v1.Health/Check", metadata=[("x-padding", "a" * 20000)])
    _, after = connection.unary("home.v1.Health/Check")
    check("CALL_START: over 16,384 bytes of metadata is RESOURCE_EXHAUSTED and the connection goes on",
          end.code == RESOURCE_EXHAUSTED and after.code == OK, (end, after))
    stream = connection.allocate_stream()
    connection.send(call_start(stream, "home.v1.Health/Check"))
    connection.send(frame(CANCEL, 0, stream))
    _, end = connection.unary("home.v1.Health/Check")
    check("CANCEL: nothing more comes for the cancelled stream", end.code == OK, end)
    connection.send(call_start(1, "home.v1.Health/Check") + frame(MESSAGE, END_STREAM, 1))
    check_goaway("a CALL_START whose stream id is not greater than the last: GOAWAY INVALID_ARGUMENT",
                 connection, INVALID_ARGUMENT)

    connection = Connection(server.address)
    connection.send(frame(MESSAGE, END_STREAM, 9))
    check_goaway("a MESSAGE for a stream id above every id opened: GOAWAY INVALID_ARGUMENT", connection,
                 INVALID_ARGUMENT)
    check_stream_limit(server)
    check_client_settings_and_goaway(server)

    connection = Connection(server.address)
    connection.next_stream = 0xFFFFFFFF
    _, end = connection.unary("home.v1.Health/Check")
    connection.send(frame(GOAWAY, 0, 0, struct.pack(">IH", 0, 0) + b"stream ids used up"))
    check("Connection lifecycle: a call on the last stream id, 4,294,967,295, is answered; the client's "
          "GOAWAY then closes the connection", end.code == OK and closes_after_goaway(connection), end)

    protocol_errors = [
        ("an unknown frame type", frame(0x42, 0, 0), INVALID_ARGUMENT),
        ("a CALL_START with trailing bytes", frame(CALL_START, 0, 1, call_start(1, "home.v1.Health/Check")[10:] + b"\x00"),
         INVALID_ARGUMENT),
        ("a frame header over MAX_FRAME_SIZE (before its payload)", struct.pack(">IBBI", 2 << 20, MESSAGE, 0, 1),
         RESOURCE_EXHAUSTED),
        ("CREDIT granting 0", frame(CREDIT, 0, 1, b"\x00\x00\x00\x00"), INVALID_ARGUMENT),
        ("a CANCEL with a payload", frame(CANCEL, 0, 1, b"x"), INVALID_ARGUMENT),
        ("PING on a stream", frame(PING, 0, 3, b"12345678"), INVALID_ARGUMENT),
        ("a second preface", PREFACE, INVALID_ARGUMENT),
        ("CALL_END from the client", frame(CALL_END, 0, 1, b"\x00\x00\x00\x00"), INVALID_ARGUMENT),
    ]
    for name, data, code in protocol_errors:
        connection = Connection(server.address)
        connection.send(data)
        check_goaway("Protocol errors: %s gets GOAWAY %d and the connection closes" % (name, code), connection, code)

    connection = Connection(server.address, handshake=False)
    connection.send(PREFACE + frame(PING, 0, 0, b"abcdefgh"))
    connection.read_server_preface()
    check_goaway("Connection lifecycle: a first frame other than SETTINGS: GOAWAY \"expected SETTINGS first\"",
                 connection, INVALID_ARGUMENT, "expected SETTINGS first")

    connection = Connection(server.address, handshake=False)
    connection.send(b"HRPC\r\n\x00\x02")
    connection.read_server_preface()
    check_goaway("Preface: version 2 gets our preface, then GOAWAY \"unsupported protocol version 2\"",
                 connection, INVALID_ARGUMENT, "unsupported protocol version 2")

    stranger = socket.create_connection(server.address)
    stranger.settimeout(10)
    stranger.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    check("Preface: a stranger (HTTP) gets no answer at all, the connection closes", stranger.recv(100) == b"")
    _, end = Connection(server.address).unary("home.v1.Health/Check")
    check("... and the server keeps serving", end.code == OK, end)


def check_stream_limit(server):
    """MAX_CONCURRENT_STREAMS: the 101st call open at once is refused, retryable; the others go on."""
    connection = Connection(server.address)
    open_streams = []
    for _ in range(100):
        stream = connection.allocate_stream()
        connection.send(call_start(stream, "home.v1.Health/Check"))  # open until its request comes
        open_streams.append(stream)
    _, end = connection.unary("home.v1.Health/Check")
    check("Stream lifecycle: a call past MAX_CONCURRENT_STREAMS: RESOURCE_EXHAUSTED, retryable",
          end.code == RESOURCE_EXHAUSTED and end.retryable, end)
    connection.send(b"".join(frame(MESSAGE, END_STREAM, stream) for stream in open_streams))
    answers = connection.collect(open_streams)
    check("... and the 100 open calls complete once their requests come",
          all(end.code == OK for _, end in answers.values()))


def check_client_settings_and_goaway(server):
    connection = Connection(server.address, initial_stream_credit=0)
    owner = server.owner()
    _, end = connection.unary(HOME + "ListHomes", metadata=bearer(server.owner_token))
    response, _ = owner.unary(HOME + "AddHome", field_bytes(1, "Credit " + uuid.uuid4().hex[:6]))
    home_id = message_field(response, 1)[1][0]
    stream = connection.start(HOME + "Subscribe", field_bytes(1, home_id) + field_varint(5, 1))
    held = read_messages(connection, stream, 0.5)
    connection.send(settings_frame([(2, 64)]))
    connection.send(frame(CREDIT, 0, stream, struct.pack(">I", 1)))
    released = read_messages(connection, stream, 0.5)
    check("SETTINGS: with INITIAL_STREAM_CREDIT 0 a stream's first message waits for CREDIT",
          held == [] and len(released) == 1 and 10 in decode(released[0]), (len(held), len(released)))

    open_call = connection.allocate_stream()
    connection.send(call_start(open_call, "home.v1.Health/Check"))
    connection.send(frame(GOAWAY, 0, 0, struct.pack(">IH", 0, 0) + b"done"))
    refused = connection.allocate_stream()
    connection.send(call_start(refused, "home.v1.Health/Check") + frame(MESSAGE, END_STREAM, refused))
    _, end = connection.collect([refused])[refused]
    check("A client's GOAWAY: a later CALL_START is refused UNAVAILABLE", end.code == UNAVAILABLE, end)
    connection.send(frame(MESSAGE, END_STREAM, open_call))
    connection.send(frame(CANCEL, 0, stream))
    _, end = connection.collect([open_call])[open_call]
    check("A client's GOAWAY: the open calls finish, then the server closes",
          end.code == OK and closes_after_goaway(connection), end)

    connection = Connection(server.address)
    connection.socket.shutdown(socket.SHUT_WR)
    closed = False
    try:
        connection.read_frame()
    except EOFError:
        closed = True
    check("A client that half-closes ends the connection", closed)


def closes_after_goaway(connection):
    """Whether the server closes the connection, sending at most its own GOAWAY(OK) first."""
    try:
        while True:
            frame_type, _, _, payload = connection.read_frame()
            if frame_type != GOAWAY or GoAway(payload).code != OK:
                return False
    except EOFError:
        return True


def check_goaway(name, connection, code, text=None):
    try:
        while True:
            frame_type, _, _, payload = connection.read_frame()
            if frame_type == GOAWAY:
                away = GoAway(payload)
                break
    except EOFError:
        check(name, False, "closed without GOAWAY")
        return
    closed = False
    try:
        connection.read_frame()
    except EOFError:
        closed = True
    check(name, away.code == code and (text is None or text in away.message) and closed, (away, closed))


def check_liveness(binary):
    """Liveness and limits (PROTOCOL.md, "Liveness", "Connection lifecycle"), against a homed of
    their own with short timeouts, a connection limit of 3 and a Unix-domain socket."""
    with tempfile.TemporaryDirectory() as directory:
        socket_path = os.path.join(directory, "homed.sock")
        server = Server(binary, directory, ["--keepalive-interval", "1", "--keepalive-timeout", "1",
                                            "--handshake-timeout", "1", "--request-timeout", "1",
                                            "--idle-timeout", "4", "--max-connections", "3",
                                            "--unix-socket", socket_path])
        server.start()
        try:
            local = Connection(socket_path)
            _, end = local.unary("home.v1.Health/Check")
            check("Transport: the Unix-domain socket speaks the same protocol", end.code == OK, end)
            others = [Connection(server.address), Connection(server.address)]
            refused = Connection(server.address, handshake=False)
            refused.send(PREFACE + settings_frame([]))
            refused.read_server_preface()
            check_goaway("Connection lifecycle: a connection over the server's limit gets its preface and "
                         "GOAWAY(RESOURCE_EXHAUSTED, \"too many connections\")", refused, RESOURCE_EXHAUSTED,
                         "too many connections")
            for connection in [local] + others:
                connection.close()
            time.sleep(0.2)

            silent = socket.create_connection(server.address)
            silent.settimeout(5)
            started = time.monotonic()
            check("Handshake timeout: a connection that sends nothing is closed without an answer",
                  silent.recv(100) == b"" and time.monotonic() - started < 3)
            half = Connection(server.address, handshake=False)
            half.send(PREFACE)
            half.read_server_preface()
            check_goaway("Handshake timeout: a preface without SETTINGS gets GOAWAY(DEADLINE_EXCEEDED, "
                         "\"handshake timeout\")", half, DEADLINE_EXCEEDED, "handshake timeout")

            waiting = Connection(server.address)
            stream = waiting.allocate_stream()
            started = time.monotonic()
            waiting.send(call_start(stream, "home.v1.Health/Check"))
            _, end = waiting.collect([stream])[stream]
            check("Request timeout: a call whose request does not come ends DEADLINE_EXCEEDED (1 s here)",
                  end.code == DEADLINE_EXCEEDED and 0.5 < time.monotonic() - started < 3, end)
            waiting.close()

            deaf = Connection(server.address)
            frame_type, _, _, payload = deaf.read_frame()
            check("Keepalive: a silent connection gets a PING (after 1 s here)", frame_type == PING, frame_type)
            check_goaway("Keepalive: a PING without PONG ends in GOAWAY(DEADLINE_EXCEEDED, \"keepalive timeout: "
                         "no PONG\")", deaf, DEADLINE_EXCEEDED, "keepalive timeout")

            idle = Connection(server.address)
            started = time.monotonic()
            away = None
            while away is None:
                frame_type, _, _, payload = idle.read_frame()
                if frame_type == PING:
                    idle.send(frame(PONG, 0, 0, payload))
                elif frame_type == GOAWAY:
                    away = GoAway(payload)
            check("Idle timeout: a connection without calls, answering PINGs, gets GOAWAY(OK, \"idle timeout\")",
                  away.code == OK and "idle timeout" in away.message and 3 < time.monotonic() - started < 8, away)
        finally:
            server.process.kill()
            server.process.wait()
