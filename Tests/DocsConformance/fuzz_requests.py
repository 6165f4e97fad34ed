"""Feeds every method requests built from the .proto files with extreme and mismatched values (the
largest and smallest integers, NaN and infinities, 70,000-character and control-character strings,
ids of the wrong length, of other objects and of other kinds, unknown enum numbers, long repeated
fields) as the owner and as a guest, with an accessory attached that answers commands with random
HAP statuses. Every call must end with a status other than INTERNAL, UNKNOWN or DATA_LOSS, on a
connection that stays open; afterwards the server must drain, exit 0, and start again on the store
it left, every home readable.

Usage: fuzz_requests.py HOMED [CALLS [SEED]]  (defaults 1500 and 1, what scripts/test.sh runs; other
seeds explore further). The ids the server assigns differ from run to run, so a seed repeats the
kinds of requests, not their bytes: a failure prints the request that caused it. The method table
comes from `rpc-client methods` beside HOMED.
"""

import glob
import math
import os
import random
import re
import signal
import struct
import subprocess
import sys
import threading
import uuid

from docs_client import CANCEL, CALL_END, MESSAGE, decode, field_bytes, field_varint, frame, varint
from harness import HOME, LINK, OK, advertise, check, lamp, message_field, new_account, pair, run_checks

PROTO_DIRECTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "proto", "home", "v1")
# Left out of the random choice: they would end the run's fixtures (the home, the accessory) or
# write files (a backup); the Swift tests and check_docs.py cover them.
LEFT_OUT = {"home.v1.HomeService/RemoveHome", "home.v1.HomeService/RemoveAccessory", "home.v1.AdminService/BackupStore",
            "home.v1.AccountService/RevokeToken", "home.v1.HomeService/RemoveUser"}
STREAMING = ("/Subscribe", "/BrowseAccessories", "/Advertise", "/Attach")
SERVER_FAULTS = {2: "UNKNOWN", 13: "INTERNAL", 15: "DATA_LOSS"}

SIGNED = [0, 1, -1, 59, 60_000, 2**31 - 1, -2**31, 2**53 + 1, 2**63 - 1, -2**63, 253_402_300_800_000, -62_135_596_800_000]
UNSIGNED = [0, 1, 255, 2**32 - 1, 2**63, 2**64 - 1]
FLOATS = [math.nan, math.inf, -math.inf, 1e308, -1e308, -0.0, 5e-324, 0.5, 100.0, -5.0]
TEXTS = ["", " ", "'", "x" * 70_000, "a\x00b", "\u202eRoom", "😀" * 70, "Room", "Home 1", "UTC", "America/New_York",
         "../../etc/passwd", "00000043-0000-1000-8000-0026BB765291", "43", "123-45-678", "135-79-246", "hac_x",
         "\ud7ff\ue000"]


def parse_messages():
    """{message name: [(label, type, field number)]} and the enum names, from proto/home/v1."""
    messages, enums = {}, set()
    for path in glob.glob(os.path.join(PROTO_DIRECTORY, "*.proto")):
        scopes = []
        for line in open(path):
            line = line.split("//")[0].strip()
            # Service blocks, their rpc option blocks and extensions hold no message fields.
            opened = re.match(r"(message|enum|oneof|service|extend) ([\w.]+) \{", line) or \
                re.match(r"(rpc) (\w+)\(.*\{$", line)
            if opened:
                kind, name = opened.groups()
                scopes.append((kind, name))
                if kind == "message":
                    messages.setdefault(name, [])
                elif kind == "enum":
                    enums.add(name)
            elif line.startswith("}"):
                scopes.pop()
            else:
                field = re.match(r"(repeated |optional )?([\w.]+) \w+ = (\d+);", line)
                if field and scopes and scopes[-1][0] in ("message", "oneof"):
                    owner = [name for kind, name in scopes if kind == "message"][-1]
                    messages[owner].append(((field.group(1) or "").strip(), field.group(2).split(".")[-1],
                                            int(field.group(3))))
    return messages, enums


class RequestMaker:
    def __init__(self, rng, messages, enums, ids):
        self.rng, self.messages, self.enums, self.ids = rng, messages, enums, ids

    def message(self, name, depth=0):
        out = b""
        for label, field_type, number in self.messages.get(name, []):
            if self.rng.random() < 0.2:
                continue
            count = 1
            if label == "repeated":
                count = self.rng.choice([0, 1, 2, 3, 300 if depth == 0 and self.rng.random() < 0.05 else 1])
            for _ in range(count):
                out += self.field(field_type, number, depth)
        return out

    def field(self, field_type, number, depth):
        rng = self.rng
        if field_type in ("int64", "int32", "sint64", "sint32"):
            return field_varint(number, rng.choice(SIGNED))
        if field_type in ("uint64", "uint32"):
            return field_varint(number, rng.choice(UNSIGNED))
        if field_type == "bool":
            return field_varint(number, rng.choice([0, 1, 2]))
        if field_type in ("double", "float"):
            return varint((number << 3) | 1) + struct.pack("<d", rng.choice(FLOATS))
        if field_type == "string":
            return field_bytes(number, rng.choice(TEXTS))
        if field_type == "bytes":
            if rng.random() < 0.7:
                return field_bytes(number, rng.choice(self.ids))
            return field_bytes(number, rng.choice([b"", rng.randbytes(16), rng.randbytes(15), rng.randbytes(17), bytes(16),
                                                   rng.randbytes(rng.randint(0, 400))]))
        if field_type in self.enums:
            return field_varint(number, rng.choice([0, 1, 2, 3, 5, 99, -1]))
        if field_type in self.messages and depth < 4:
            return field_bytes(number, self.message(field_type, depth + 1))
        return b""


def method_table(homed):
    rpc_client = os.path.join(os.path.dirname(homed), "rpc-client")
    listing = subprocess.run([rpc_client, "methods"], capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in listing.splitlines()[1:] if line.strip()]
    return [(row[0], row[1].split(".")[-1]) for row in rows if row[0] not in LEFT_OUT]


def ids_in(buffer, found, depth=0):
    """Every 16-byte length-delimited field anywhere in a message: the ids it mentions."""
    try:
        fields = decode(buffer)
    except (IndexError, ValueError):
        return
    for values in fields.values():
        for value in values:
            if isinstance(value, bytes):
                if len(value) == 16:
                    found.add(value)
                elif depth < 8:
                    ids_in(value, found, depth + 1)


def answer_forever(link):
    """The accessory: answers each command with a HAP status chosen at random, until its link ends."""
    rng = random.Random(7)
    try:
        while True:
            frame_type, _, _, payload = link.read_frame()
            if frame_type == CALL_END:
                return
            if frame_type == MESSAGE and 4 in decode(payload):
                command = decode(decode(payload)[4][0])
                status = rng.choice([0, 0, 0, -70402, -70403, -70404, -70410, -70412, -1, 1])
                link.unary(LINK + "AnswerCommand", field_varint(1, command[1][0]) + field_varint(2, status))
    except (EOFError, OSError):
        return


def fuzz(server):
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    messages, enums = parse_messages()
    methods = method_table(server.binary)
    server.start()
    owner = server.owner()
    response, _ = owner.unary(HOME + "AddHome", field_bytes(1, "Fuzz " + uuid.uuid4().hex[:6]))
    home_id = message_field(response, 1)[1][0]
    for method, name in [("AddRoom", "Den"), ("AddZone", "Up"), ("AddActionSet", "Scene"), ("AddServiceGroup", "Lights")]:
        owner.unary(HOME + method, field_bytes(1, home_id) + field_bytes(2, name))
    link, description = advertise(server, lamp("Fuzz Lamp"), "135-79-246")
    pair(owner, link, home_id, description[1][0], "135-79-246")
    threading.Thread(target=answer_forever, args=(link,), daemon=True).start()
    guest_id, _, guest = new_account(server, owner, "Fuzz guest")
    owner.unary(HOME + "AddUser", field_bytes(1, home_id) + field_bytes(2, guest_id))

    found = {home_id, guest_id}
    response, _ = owner.unary(HOME + "GetHome", field_bytes(1, home_id))
    ids_in(response, found)
    maker = RequestMaker(rng, messages, enums, sorted(found))
    faults, statuses = [], {}
    for index in range(calls):
        method, request_type = rng.choice(methods)
        connection = guest if rng.random() < 0.3 else owner
        request = maker.message(request_type)
        while len(request) > 1_000_000:  # within the server's MAX_FRAME_SIZE: a larger one ends the connection
            request = maker.message(request_type)
        try:
            if method.endswith(STREAMING):
                stream = connection.start(method, request, timeout_ms=200)  # its first answer, or its deadline
                frame_type, flags, _, payload = connection.next_frame([stream])
                if frame_type == CALL_END:
                    code = struct.unpack(">H", payload[:2])[0]
                else:
                    connection.send(frame(CANCEL, 0, stream))
                    code = OK
            else:
                _, end = connection.unary(method, request, timeout_ms=3000)
                code = end.code
        except (EOFError, OSError) as error:
            faults.append("%s: the connection ended (%s) on request %s" % (method, error, request.hex()[:200]))
            break
        statuses[code] = statuses.get(code, 0) + 1
        if code in SERVER_FAULTS:
            faults.append("%s: %s on request %s" % (method, SERVER_FAULTS[code], request.hex()[:200]))
    print("      %d calls (seed %d), statuses %s" % (sum(statuses.values()), seed, sorted(statuses.items())))
    check("Fuzzed requests: no INTERNAL, UNKNOWN or DATA_LOSS, no connection lost", faults == [], faults[:5])

    server.process.send_signal(signal.SIGTERM)
    check("... then the server drains and exits 0", server.process.wait(timeout=15) == 0, server.process.returncode)
    server.start()
    owner = server.owner()
    response, end = owner.unary(HOME + "ListHomes")
    homes = [decode(home)[1][0] for home in decode(response or b"").get(1, [])]
    unreadable = []
    for home in homes:
        _, end = owner.unary(HOME + "GetHome", field_bytes(1, home))
        if end.code != OK:
            unreadable.append(end)
    check("... and starts again on the store it left, %d homes, each readable" % len(homes),
          end.code == OK and homes and unreadable == [], unreadable)
    server.process.send_signal(signal.SIGTERM)
    server.process.wait(timeout=15)


if __name__ == "__main__":
    run_checks(fuzz)
