"""Opens N TLS connections to a server, finishes each handshake and the protocol's own greeting (our
preface and SETTINGS, answered; Redis: a PING, answered), leaves them idle, and prints one table row
of the server's resident memory (VmRSS of its pid) before and after, and the difference per
connection. The client holds the connections in one process with non-blocking sockets and select,
so that 10,000 need no threads.

Usage: idle-tls-connections.py homed|redis PORT SERVER_PID COUNT CA_FILE
"""

import selectors
import socket
import ssl
import sys
import time


def resident_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def greeting(kind: str) -> bytes:
    if kind == "homed":
        # PROTOCOL.md: the preface, then an empty SETTINGS frame (length 0, type 1, flags 0, stream 0).
        return b"HRPC\r\n\x00\x01" + bytes([0, 0, 0, 0, 1, 0, 0, 0, 0, 0])
    return b"*1\r\n$4\r\nPING\r\n"


def main() -> None:
    kind, port, pid, count, ca = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    context = ssl.create_default_context(cafile=ca)
    if kind == "homed":
        context.set_alpn_protocols(["hrpc/1"])
    before = resident_kib(pid)
    connections = []
    selector = selectors.DefaultSelector()
    pending = 0
    batch = 200
    for start in range(0, count, batch):
        for _ in range(min(batch, count - start)):
            raw = socket.create_connection(("127.0.0.1", port))
            tls = context.wrap_socket(raw, server_hostname="localhost", do_handshake_on_connect=False)
            tls.setblocking(False)
            connections.append(tls)
            selector.register(tls, selectors.EVENT_READ | selectors.EVENT_WRITE, {"state": "handshake"})
            pending += 1
        while pending > 0:
            for key, _ in selector.select(timeout=10):
                tls, data = key.fileobj, key.data
                try:
                    if data["state"] == "handshake":
                        tls.do_handshake()
                        tls.sendall(greeting(kind))
                        data["state"] = "answer"
                        selector.modify(tls, selectors.EVENT_READ, data)
                    elif tls.recv(4096):
                        selector.unregister(tls)
                        pending -= 1
                except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                    pass
    time.sleep(2)
    after = resident_kib(pid)
    per = (after - before) * 1024 / count
    print(f"| {kind} | {count:,} | {before / 1024:.1f} MiB | {after / 1024:.1f} MiB | {per / 1000:.1f} kB |")
    for tls in connections:
        tls.close()


if __name__ == "__main__":
    main()
