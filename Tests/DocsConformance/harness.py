"""What check_docs.py and check_homekit.py share: a homed of their own, the check log, and the
accessories they pair (built from the documents and HAP-CATALOG.md's type numbers).
"""

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

from docs_client import MESSAGE, CallEnd, Connection, bearer, decode, field_bytes, field_varint

HOME = "home.v1.HomeService/"
ACCOUNTS = "home.v1.AccountService/"
LINK = "home.v1.AccessoryLink/"
OK, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED = 0, 3, 4, 5, 6, 7
RESOURCE_EXHAUSTED, UNIMPLEMENTED, UNAVAILABLE, UNAUTHENTICATED = 8, 12, 14, 16

failures = []


def check(name, passed, evidence=""):
    print(("ok    " if passed else "FAIL  ") + name + ("" if passed else "\n      got: %r" % (evidence,)))
    if not passed:
        failures.append(name)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """A homed of the checks' own: `arguments` are more of its options."""

    def __init__(self, binary, directory, arguments=()):
        self.binary, self.directory, self.port = binary, directory, free_port()
        self.address = ("127.0.0.1", self.port)
        self.arguments = list(arguments)

    def start(self):
        log = open(os.path.join(self.directory, "homed.log"), "ab")
        self.process = subprocess.Popen([self.binary, "--port", str(self.port)] + self.arguments, cwd=self.directory,
                                        stdout=log, stderr=log)
        for _ in range(200):
            if self.process.poll() is not None:
                raise RuntimeError("homed exited with status %d" % self.process.returncode)
            try:
                socket.create_connection(self.address).close()
                break
            except OSError:
                time.sleep(0.05)
        with open(os.path.join(self.directory, "homed-owner.token")) as file:
            self.owner_token = file.read().strip()

    def owner(self, **options):
        connection = Connection(self.address, **options)
        _, end = connection.unary(HOME + "ListHomes", metadata=bearer(self.owner_token))
        assert end.code == OK, end
        return connection


def message_field(response, number):
    """The sub-message in field `number` of a response, decoded."""
    return decode(decode(response)[number][0])


def subscribe(connection, request):
    """Opens a Subscribe, waits until the server has taken it (a later call on the connection was
    answered), and returns its stream id."""
    stream = connection.start(HOME + "Subscribe", request)
    connection.unary("home.v1.Health/Check")
    return stream


def new_account(server, owner, name):
    """An account the owner creates and issues a token for: (its id, the token's id, a connection
    authenticated with it)."""
    response, end = owner.unary(ACCOUNTS + "CreateAccount", field_bytes(1, name))
    assert end.code == OK, end
    account_id = message_field(response, 1)[1][0]
    response, end = owner.unary(ACCOUNTS + "IssueToken", field_bytes(1, account_id))
    assert end.code == OK, end
    token = decode(response)
    connection = Connection(server.address)
    _, end = connection.unary(HOME + "ListHomes", metadata=bearer(token[2][0].decode()))
    assert end.code == OK, end
    return account_id, decode(token[1][0])[1][0], connection


def read_messages(connection, stream, quiet_seconds):
    """The stream's MESSAGE payloads until nothing arrives for quiet_seconds."""
    messages = []
    connection.socket.settimeout(quiet_seconds)
    try:
        while True:
            frame_type, _, _, payload = connection.next_frame([stream])
            if frame_type == MESSAGE:
                messages.append(payload)
    except socket.timeout:
        pass
    connection.socket.settimeout(10)
    return messages


def run_checks(body):
    """Runs body(server) against the homed named on the command line, in a temporary directory (body
    starts it), prints the server's log if a step raised, and exits 1 if any check failed."""
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as directory:
        server = Server(binary, directory)
        try:
            body(server)
        except Exception:
            log_path = os.path.join(directory, "homed.log")
            if os.path.exists(log_path):
                with open(log_path, errors="replace") as log:
                    sys.stderr.write(log.read()[-4000:])
            raise
        finally:
            if getattr(server, "process", None) and server.process.poll() is None:
                server.process.kill()
    print("%d checks failed" % len(failures) if failures else "every check passed")
    sys.exit(1 if failures else 0)


def uuid_type(short):
    """A HAP-CATALOG.md type number as the full Apple type UUID."""
    return "%08X-0000-1000-8000-0026BB765291" % short


def characteristic(short, value=None):
    return field_bytes(2, uuid_type(short)) + (field_bytes(5, value) if value is not None else b"")


def text(value):
    return field_bytes(5, value)


def accessory_information(name, model):
    """The AccessoryInformation service (0x3E) with its required characteristics."""
    return field_bytes(8, field_bytes(2, uuid_type(0x3E))
                       + field_bytes(7, characteristic(0x14))  # Identify
                       + field_bytes(7, characteristic(0x20, text("Acme")))  # Manufacturer
                       + field_bytes(7, characteristic(0x21, text(model)))  # Model
                       + field_bytes(7, characteristic(0x23, text(name)))  # Name
                       + field_bytes(7, characteristic(0x30, text("SN " + name)))  # SerialNumber
                       + field_bytes(7, characteristic(0x52, text("1.0"))))  # FirmwareRevision


def lamp(name):
    """An AccessoryDescription: a Lightbulb (0x43: On, Brightness at 50) and its information."""
    return (field_bytes(2, name) + field_varint(3, 5) + field_bytes(4, "Acme") + field_bytes(5, "L1")
            + field_varint(7, 1) + accessory_information(name, "L1")
            + field_bytes(8, field_bytes(2, uuid_type(0x43)) + field_varint(4, 1)
                          + field_bytes(7, characteristic(0x25, field_varint(1, 0)))
                          + field_bytes(7, characteristic(0x08, field_varint(2, 50)))))


def sensor_and_switch(name):
    """An AccessoryDescription: a Switch (0x49: On) and a ContactSensor (0x80: ContactSensorState)."""
    return (field_bytes(2, name) + field_varint(3, 8) + field_bytes(4, "Acme") + field_bytes(5, "S1")
            + accessory_information(name, "S1")
            + field_bytes(8, field_bytes(2, uuid_type(0x49)) + field_bytes(3, name + " Switch")
                          + field_bytes(7, characteristic(0x25, field_varint(1, 0))))
            + field_bytes(8, field_bytes(2, uuid_type(0x80)) + field_bytes(3, name + " Contact")
                          + field_bytes(7, characteristic(0x6A, field_varint(2, 0)))))


def bridge(name, bridged_names):
    """A bridge (category 2) with a lamp behind it for each name."""
    return (field_bytes(2, name) + field_varint(3, 2) + field_bytes(4, "Acme") + field_bytes(5, "B1")
            + accessory_information(name, "B1")
            + b"".join(field_bytes(9, lamp(bridged)) for bridged in bridged_names))


def characteristic_ids(accessory):
    """{(service type number, characteristic type number): id} of a decoded AccessoryDescription or Accessory."""
    # Field numbers: services, a service's type, its characteristics, a characteristic's type.
    services, service_type, characteristics, characteristic_type = (13, 3, 9, 4) if 13 in accessory else (8, 2, 7, 2)
    ids = {}
    for service in map(decode, accessory.get(services, [])):
        for item in map(decode, service.get(characteristics, [])):
            key = (int(service[service_type][0][:8], 16), int(item[characteristic_type][0][:8], 16))
            ids[key] = item[1][0]
    return ids


def answer_commands(link, hap_statuses):
    """Starts a thread that answers the link's next commands with these HAP statuses, in order. Join it,
    then read what it recorded: [(the command, decoded, and the CallEnd of its AnswerCommand)]."""
    answered = []

    def run():
        for status in hap_statuses:
            _, _, _, payload = link.read_frame()
            command = decode(decode(payload)[4][0])
            _, end = link.unary(LINK + "AnswerCommand", field_varint(1, command[1][0]) + field_varint(2, status))
            answered.append((command, end))

    thread = threading.Thread(target=run)
    thread.start()
    thread.answered = answered
    return thread


def advertise(server, description, setup_code):
    """Opens a link and advertises: (the link, the decoded description with its ids, or the CallEnd of
    a refusal)."""
    link = Connection(server.address)
    link.start(LINK + "Advertise", field_bytes(1, description) + field_bytes(2, setup_code))
    frame_type, flags, _, payload = link.read_frame()
    if frame_type != MESSAGE:
        return link, CallEnd(payload, flags)
    return link, decode(decode(decode(payload)[1][0])[1][0])


def pair(owner, link, home_id, accessory_id, setup_code):
    """AddAccessory, then the credential the link receives: (the CallEnd, the `paired` credential)."""
    _, end = owner.unary(HOME + "AddAccessory", field_bytes(1, home_id) + field_bytes(3, accessory_id)
                         + field_bytes(4, setup_code))
    if end.code != OK:
        return end, None
    _, _, _, payload = link.read_frame()
    paired = decode(payload)
    return end, (decode(paired[2][0]).get(1, [b""])[0].decode() if 2 in paired else None)
