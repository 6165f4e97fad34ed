"""Checks homed's TLS against docs/PROTOCOL.md ("TLS") and docs/OPERATIONS.md ("Security"), from
outside: Python's ssl with the documents' client, openssl s_client, and hostile peers (a plaintext
client, a wrong ALPN, old versions, renegotiation, a stalled handshake, a truncated record, 10,000
half-open handshakes), each refused with a logged reason while other connections are served.

Usage: check_tls.py HOMED  (makes certificates with scripts/make-test-certificates.sh and starts
its own servers). Exit status 1 if any check failed.
"""

import os
import resource
import socket
import ssl
import subprocess
import sys
import tempfile
import time

from docs_client import Connection, bearer, decode
from harness import HOME, OK, Server, check, failures

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def client_context(certs, ca="ca", alpn=("hrpc/1",), certificate=None, maximum=None):
    context = ssl.create_default_context(cafile=os.path.join(certs, ca + ".pem"))
    if alpn:
        context.set_alpn_protocols(list(alpn))
    if certificate:
        context.load_cert_chain(os.path.join(certs, certificate + ".pem"), os.path.join(certs, certificate + ".key"))
    if maximum:
        context.minimum_version = min(context.minimum_version, maximum, key=lambda version: version.value)
        context.maximum_version = maximum
    return context


def served(server, context):
    """Whether a client with `context` gets through the handshake, the preface and an authenticated
    call; returns (served, what the TLS session agreed or the error)."""
    try:
        connection = Connection(server.address, tls=context)
        _, end = connection.unary(HOME + "ListHomes", metadata=bearer(server.owner_token))
        agreed = (connection.socket.version(), connection.socket.selected_alpn_protocol())
        connection.close()
        return end.code == OK, agreed
    except (ssl.SSLError, OSError, AssertionError) as error:
        return False, repr(error)


def server_info(server):
    """home.v1.ServerInfo/Get's answer, decoded, over the server's Unix socket."""
    connection = Connection(server.unix_socket)
    response, end = connection.unary("home.v1.ServerInfo/Get", metadata=bearer(server.owner_token))
    connection.close()
    assert end.code == OK, end
    return decode(response)


def open_connections(server):
    """connections_open (field 3) of ServerInfo."""
    return server_info(server).get(3, [0])[0]


def wait_until(condition, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def closed_by_server(sock, seconds):
    """Whether the server closes `sock` (end of input or a reset) within `seconds`."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def log_of(server):
    with open(os.path.join(server.directory, "homed.log"), errors="replace") as log:
        return log.read()


def check_tls(binary, directory):
    certs = os.path.join(directory, "certs")
    subprocess.run([os.path.join(ROOT, "scripts/make-test-certificates.sh"), certs], check=True)
    os.makedirs(os.path.join(directory, "one"))
    server = Server(binary, os.path.join(directory, "one"), [
        "--tls-cert", os.path.join(certs, "server.pem"), "--tls-key", os.path.join(certs, "server.key"),
        "--unix-socket", os.path.join(directory, "one", "homed.sock"), "--handshake-timeout", "5",
        "--log-level", "notice"])
    server.unix_socket = os.path.join(directory, "one", "homed.sock")
    server.start()
    wait_until(lambda: os.path.exists(server.unix_socket))

    # PROTOCOL.md, "TLS": versions and ALPN.
    ok, agreed = served(server, client_context(certs))
    check("TLS: the documents' client is served over TLS 1.3 with ALPN hrpc/1", ok and agreed == ("TLSv1.3", "hrpc/1"),
          agreed)
    ok, agreed = served(server, client_context(certs, maximum=ssl.TLSVersion.TLSv1_2))
    check("TLS: a TLS 1.2 client is served", ok and agreed[0] == "TLSv1.2", agreed)
    ok, agreed = served(server, client_context(certs, alpn=()))
    check("TLS: a client offering no ALPN is served", ok and agreed[1] is None, agreed)
    ok, agreed = served(server, client_context(certs, alpn=("h2", "http/1.1")))
    check("TLS: a client offering ALPN without hrpc/1 is refused (no_application_protocol)",
          not ok and "NO APPLICATION PROTOCOL" in agreed.upper().replace("_", " "), agreed)
    ok, agreed = served(server, client_context(certs, maximum=ssl.TLSVersion.TLSv1_1))
    check("TLS: TLS 1.1 is refused", not ok, agreed)
    ok, agreed = served(server, client_context(certs, ca="other-ca"))
    check("TLS: the client refuses a server certificate its CAs did not sign", not ok and "CERTIFICATE_VERIFY_FAILED"
          in agreed.upper(), agreed)

    # A plaintext client on the TLS listener: its preface is not a TLS record.
    plain = socket.create_connection(server.address)
    plain.sendall(b"HRPC\r\n\x00\x01" + bytes([0, 0, 0, 0, 1, 0, 0, 0, 0, 0]))
    check("TLS: a plaintext client is closed without a preface", closed_by_server(plain, 5))
    plain.close()

    # openssl s_client speaks to it: the server's preface comes back inside TLS.
    client = subprocess.Popen(
        ["openssl", "s_client", "-quiet", "-connect", "%s:%d" % server.address, "-alpn", "hrpc/1",
         "-CAfile", os.path.join(certs, "ca.pem"), "-verify_return_error"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    client.stdin.write(b"HRPC\r\n\x00\x01" + bytes([0, 0, 0, 0, 1, 0, 0, 0, 0, 0]))
    client.stdin.flush()
    answer = client.stdout.read(8)
    client.kill()
    client.wait()
    check("TLS: openssl s_client gets the server's preface", answer == b"HRPC\r\n\x00\x01", answer)

    # TLS 1.2 renegotiation, asked for by s_client's "R" command: refused, the server goes on.
    renegotiation = subprocess.run(
        ["openssl", "s_client", "-connect", "%s:%d" % server.address, "-tls1_2", "-alpn", "hrpc/1",
         "-CAfile", os.path.join(certs, "ca.pem")],
        input=b"R\n", capture_output=True, timeout=20)
    output = (renegotiation.stdout + renegotiation.stderr).decode(errors="replace")
    check("TLS: a renegotiation is refused", "RENEGOTIATING" in output and "no renegotiation" in output.lower(),
          output[-400:])

    # A handshake that stalls after a record header: closed by the handshake timeout (5 s here).
    stalled = socket.create_connection(server.address)
    stalled.sendall(bytes([0x16, 0x03, 0x01, 0x02, 0x00]))
    check("TLS: a stalled handshake is closed by the handshake timeout", closed_by_server(stalled, 20))
    stalled.close()

    # A record cut short after a real handshake, then the client's side closed: the server closes.
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    session = client_context(certs).wrap_bio(incoming, outgoing, server_hostname="localhost")
    cut = socket.create_connection(server.address)
    cut.settimeout(10)
    while True:
        try:
            session.do_handshake()
            break
        except ssl.SSLWantReadError:
            cut.sendall(outgoing.read())
            incoming.write(cut.recv(65536))
    cut.sendall(outgoing.read())
    session.write(b"HRPC\r\n\x00\x01" + bytes([0, 0, 0, 0, 1, 0, 0, 0, 0, 0]))
    record = outgoing.read()
    cut.sendall(record[:len(record) // 2])
    cut.shutdown(socket.SHUT_WR)
    check("TLS: a connection ending inside a record is closed", closed_by_server(cut, 5))
    cut.close()

    # 10,000 half-open handshakes: each closed by the timeout, nothing held afterwards, a client
    # served meanwhile and after.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    half_open = []
    for _ in range(10_000):
        sock = socket.create_connection(server.address)
        sock.sendall(bytes([0x16, 0x03, 0x01]))
        half_open.append(sock)
    ok, agreed = served(server, client_context(certs))
    check("TLS: a client is served while 10,000 handshakes hang", ok, agreed)
    check("TLS: the server closes all 10,000 half-open handshakes",
          wait_until(lambda: open_connections(server) <= 1, 60), open_connections(server))
    for sock in half_open:
        sock.close()
    ok, agreed = served(server, client_context(certs))
    check("TLS: a client is served after them", ok, agreed)

    info = server_info(server)
    handshakes, failures_counted = info.get(22, [0])[0], info.get(23, [0])[0]
    check("API.md: ServerInfo counts TLS handshakes and failures (tls_handshakes, tls_failures)",
          handshakes >= 4 and failures_counted >= 10_000, (handshakes, failures_counted))
    log = log_of(server)
    check("OPERATIONS.md: refused handshakes are logged with their reason",
          "wrong version number" in log and "no application protocol" in log
          and "the TLS handshake did not finish (handshake timeout)" in log, log[-1500:])

    # Mutual TLS: a client certificate the CA signed is required.
    os.makedirs(os.path.join(directory, "mutual"))
    mutual = Server(binary, os.path.join(directory, "mutual"), [
        "--tls-cert", os.path.join(certs, "server.pem"), "--tls-key", os.path.join(certs, "server.key"),
        "--tls-client-ca", os.path.join(certs, "ca.pem"), "--log-level", "notice"])
    mutual.start()
    ok, agreed = served(mutual, client_context(certs, certificate="client"))
    check("mutual TLS: a client certificate the CA signed is served", ok, agreed)
    ok, agreed = served(mutual, client_context(certs))
    check("mutual TLS: a client without a certificate is refused", not ok, agreed)
    ok, agreed = served(mutual, client_context(certs, certificate="other-client"))
    check("mutual TLS: a client certificate of another CA is refused", not ok, agreed)
    log = log_of(mutual)
    check("mutual TLS: the refusals are logged", "peer did not return a certificate" in log and "TLS failed" in log,
          log[-1000:])
    for each in (server, mutual):
        each.process.terminate()
        each.process.wait(timeout=30)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        check_tls(os.path.abspath(sys.argv[1]), folder)
    print("%d checks failed" % len(failures) if failures else "every check passed")
    sys.exit(1 if failures else 0)
