"""What a peer can make homed hold: its resident memory while peers that never read hold on.

    python3 bench/held-memory.py HOMED subscribers CONNECTIONS STREAMS ROUNDS [HOMED OPTION...]
        A home with a bridge of 150 accessories of 20 switches (3,000 On characteristics, every one
        with notifications on), then CONNECTIONS connections that grant no credit, each opening
        STREAMS Subscribe streams of the home; then the bridge reports a new value of every On,
        ROUNDS times. Prints homed's RSS after each round, and whether the stalled streams ended.

    python3 bench/held-memory.py HOMED advertisements COUNT [HOMED OPTION...]
        Advertises up to COUNT bridges of 150 accessories of 60 switches (about 0.8 MB each,
        encoded) until one is refused; prints homed's RSS every ten and the refusal.

The clients are Tests/DocsConformance's, written from docs/PROTOCOL.md and docs/API.md. homed runs in
a temporary directory on a free port.
"""

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "DocsConformance"))
from docs_client import CALL_END, CallEnd, Connection, bearer, decode, field_bytes, field_varint  # noqa: E402
from harness import (HOME, LINK, OK, Server, accessory_information, advertise, characteristic,  # noqa: E402
                     message_field, pair, uuid_type)

SETUP_CODE = "273-61-904"


def switches(name, count):
    switch = field_bytes(8, field_bytes(2, uuid_type(0x49)) + field_bytes(7, characteristic(0x25, field_varint(1, 0))))
    return (field_bytes(2, name) + field_varint(3, 8) + field_bytes(4, "Acme") + field_bytes(5, "S1")
            + accessory_information(name, "S1") + switch * count)


def bridge(name, switches_each):
    return (field_bytes(2, name) + field_varint(3, 2) + field_bytes(4, "Acme") + field_bytes(5, "B1")
            + accessory_information(name, "B1")
            + b"".join(field_bytes(9, switches("%s %d" % (name, k), switches_each)) for k in range(150)))


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as status:
        return int(next(line for line in status if line.startswith("VmRSS")).split()[1]) // 1024


def subscribers(server, connections, streams, rounds):
    owner = server.owner()
    token = bearer(server.owner_token)
    response, end = owner.unary(HOME + "AddHome", field_bytes(1, "Held"), metadata=token)
    assert end.code == OK, end
    home_id = message_field(response, 1)[1][0]
    link, advertised = advertise(server, bridge("Hub", 20), SETUP_CODE)
    end, _ = pair(owner, link, home_id, advertised[1][0], SETUP_CODE)
    assert end.code == OK, end
    link.socket.settimeout(600)
    ons = [item[1][0] for bridged in advertised.get(9, []) for service in map(decode, decode(bridged).get(8, []))
           for item in map(decode, service.get(7, [])) if item[2][0].startswith(b"00000025")]
    for on in ons:
        _, end = owner.unary(HOME + "EnableNotification", field_bytes(1, home_id) + field_bytes(2, on)
                             + field_varint(3, 1), metadata=token)
        assert end.code == OK, end
    print("%d characteristics with notifications on; RSS %d MB" % (len(ons), rss_mb(server.process.pid)))
    stalled = []
    for _ in range(connections):
        connection = Connection(server.address, initial_stream_credit=0)
        connection.unary(HOME + "ListHomes", metadata=token)
        for _ in range(streams):
            connection.start(HOME + "Subscribe", field_bytes(1, home_id))
        stalled.append(connection)
    time.sleep(1)
    print("%d streams that never read; RSS %d MB" % (connections * streams, rss_mb(server.process.pid)))
    for round_number in range(1, rounds + 1):
        value = field_bytes(2, field_varint(1, round_number % 2))
        _, end = link.unary(LINK + "ReportValues", b"".join(field_bytes(1, field_bytes(1, on) + value) for on in ons))
        assert end.code == OK, end
        time.sleep(1)
        print("after report round %d: RSS %d MB" % (round_number, rss_mb(server.process.pid)))
    ended = 0
    for connection in stalled:
        connection.socket.settimeout(0.2)
        try:
            while True:
                frame_type, flags, _, payload = connection.read_frame()
                if frame_type == CALL_END:
                    ended += 1
                    last = CallEnd(payload, flags)
        except OSError:
            pass
    print("stalled streams ended: %d of %d%s" % (ended, connections * streams, " (%r)" % last if ended else ""))
    _, end = owner.unary(HOME + "ListHomes", metadata=token)
    print("the server still answers:", end.code == OK)


def advertisements(server, count):
    before = rss_mb(server.process.pid)
    links = []
    for index in range(count):
        link, result = advertise(server, bridge("Big %d" % index, 60), SETUP_CODE)
        if not isinstance(result, dict):
            print("advertisement %d refused: %r" % (index + 1, result))
            break
        links.append(link)
        if len(links) % 10 == 0:
            print("%d advertised: RSS %d MB (%d before)" % (len(links), rss_mb(server.process.pid), before))
    print("%d advertised: RSS %d MB" % (len(links), rss_mb(server.process.pid)))


def main():
    binary, mode = os.path.abspath(sys.argv[1]), sys.argv[2]
    arity = 3 if mode == "subscribers" else 1
    numbers = [int(argument) for argument in sys.argv[3:3 + arity]]
    server = Server(binary, tempfile.mkdtemp(), sys.argv[3 + arity:])
    server.start()
    try:
        (subscribers if mode == "subscribers" else advertisements)(server, *numbers)
    finally:
        server.process.terminate()
        server.process.wait()


if __name__ == "__main__":
    main()
