"""How long one large request holds homed's event loop (no other connection is served meanwhile).

    python3 bench/request-stalls.py HOMED
        Three requests of under a frame each, timed from the client, with `--stall-warning-ms 100`
        so homed logs each stall: a Subscribe naming 55,000 home ids (each checked for a repeat); an
        Advertise of a bridge with 150 accessories of 99 services, each of its own custom type (the
        browser lists the types, each once); and adding to a home the largest bridge a frame carries
        (150 accessories of 99 services named alike, numbered per accessory).

The clients are Tests/DocsConformance's, written from docs/PROTOCOL.md and docs/API.md. homed runs in
a temporary directory on a free port; its stall lines are printed at the end.
"""

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "DocsConformance"))
from docs_client import Connection, bearer, field_bytes, field_varint  # noqa: E402
from harness import HOME, OK, Server, accessory_information, advertise, message_field, pair  # noqa: E402

SETUP_CODE = "273-61-904"


def custom_service(number, name=None):
    """A service of a custom type (no characteristics): its type is a UUID outside the catalog."""
    return field_bytes(8, field_bytes(2, "%08X-1111-2222-3333-444455556666" % number)
                       + (field_bytes(3, name) if name else b""))


def bridge(name, services_of):
    return (field_bytes(2, name) + field_varint(3, 2) + field_bytes(4, "Acme") + field_bytes(5, "B1")
            + accessory_information(name, "B1")
            + b"".join(field_bytes(9, field_bytes(2, "%s %d" % (name, k)) + field_varint(3, 1) + field_bytes(4, "Acme")
                                   + field_bytes(5, "C1") + accessory_information("%s %d" % (name, k), "C1")
                                   + services_of(k)) for k in range(150)))


def timed(what, call):
    start = time.monotonic()
    result = call()
    print("%-70s %7.0f ms  %r" % (what, (time.monotonic() - start) * 1000, result))


def main():
    server = Server(os.path.abspath(sys.argv[1]), tempfile.mkdtemp(), ["--stall-warning-ms", "100"])
    server.start()
    owner = server.owner()
    token = bearer(server.owner_token)
    response, end = owner.unary(HOME + "AddHome", field_bytes(1, "Stalls"), metadata=token)
    assert end.code == OK, end
    home_id = message_field(response, 1)[1][0]
    try:
        ids = b"".join(field_bytes(1, os.urandom(16)) for _ in range(55_000))
        timed("Subscribe naming 55,000 home ids (NOT_FOUND)",
              lambda: owner.unary(HOME + "Subscribe", ids, metadata=token)[1].code)
        many_types = bridge("Types", lambda k: b"".join(custom_service(k * 100 + s) for s in range(99)))
        timed("Advertise of 150 accessories x 99 services of their own types (%d bytes)" % len(many_types),
              lambda: type(advertise(server, many_types, SETUP_CODE)[1]).__name__)
        one_name = bridge("Names", lambda k: b"".join(custom_service(s, "Same") for s in range(99)))
        link, advertised = advertise(server, one_name, SETUP_CODE)
        accessory_id = advertised[1][0]
        timed("AddAccessory of 150 accessories x 99 services named alike (the largest bridge)",
              lambda: pair(owner, link, home_id, accessory_id, SETUP_CODE)[0].code)
        _, end = Connection(server.address).unary("home.v1.Health/Check")
        print("the server still answers:", end.code == OK)
    finally:
        server.process.terminate()
        server.process.wait()
        with open(os.path.join(server.directory, "homed.log")) as log:
            print("".join(line for line in log if "stall" in line))


if __name__ == "__main__":
    main()
