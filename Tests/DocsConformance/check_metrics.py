"""Checks homed's metrics port against docs/OPERATIONS.md ("Metrics") from outside: the text format a
scrape gets, what anything but GET /metrics gets, slow and greedy clients, and a real Prometheus
(Debian's `prometheus`, scripts/install-packages.sh installs it) scraping the live server, with query
results for three metrics checked.

Usage: check_metrics.py HOMED  (starts its own server and Prometheus). Exit status 1 if any check failed.
"""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

from docs_client import field_bytes
from harness import HOME, OK, check, free_port, run_checks

BUCKET_BOUNDS = 39  # power-of-two bounds before +Inf


def http(port, request, timeout=10):
    """Sends raw bytes to the metrics port; returns everything the server answers until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


def status_line(answer):
    return answer.split(b"\r\n", 1)[0].decode()


def samples(text):
    """{sample name with labels: value} of an exposition."""
    found = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            found[name] = float(value)
    return found


def scrape(port):
    answer = http(port, b"GET /metrics HTTP/1.1\r\nHost: homed\r\n\r\n")
    head, body = answer.split(b"\r\n\r\n", 1)
    return head.decode(), body.decode()


def check_exposition(server, port):
    owner = server.owner()
    response, end = owner.unary(HOME + "AddHome", field_bytes(1, "Metered"))
    assert end.code == OK, end
    for _ in range(5):
        owner.unary(HOME + "ListHomes")
    head, body = scrape(port)
    values = samples(body)
    check("GET /metrics: 200, text/plain; version=0.0.4, Connection: close",
          head.startswith("HTTP/1.1 200") and "Content-Type: text/plain; version=0.0.4" in head
          and "Connection: close" in head, head)
    check("Every family has its HELP and TYPE before its samples",
          all(("# TYPE " + name.split("{")[0].removesuffix("_bucket").removesuffix("_sum").removesuffix("_count"))
              in body or ("# TYPE " + name.split("{")[0]) in body for name in values), body[:400])
    listed = 'homed_calls_total{method="home.v1.HomeService/ListHomes",code="OK"}'
    check("homed_calls_total counts calls by method and status", values.get(listed, 0) >= 5, values.get(listed))
    series = 'homed_call_duration_seconds_bucket{method="home.v1.HomeService/ListHomes",le="%s"}'
    buckets = [values[series % bound] for bound in ["1e-06", "2e-06", "+Inf"]] if series % "+Inf" in values else []
    bounds = sum(1 for name in values if name.startswith(series.split(",le=")[0] + ","))
    check("Call latency is a histogram with the same 40 buckets for every method (they sum across servers), "
          "cumulative, +Inf equal to _count",
          bounds == BUCKET_BOUNDS + 1 and buckets == sorted(buckets)
          and values[series % "+Inf"] == values['homed_call_duration_seconds_count{method="home.v1.HomeService/ListHomes"}'],
          (bounds, buckets))
    for name in ["homed_connections_open", "homed_commits_total", "homed_commit_fsync_duration_seconds_count",
                 "homed_commit_group_size_count", "homed_subscriptions_open", "homed_subscription_held_bytes",
                 "homed_events_delivered_total", "homed_events_skipped_total", "homed_accessories_attached",
                 "homed_pairing_refusals_total", "homed_store_bytes", "homed_tls_handshakes_total",
                 "homed_tls_failures_total", "homed_loop_stalls_total", "process_resident_memory_bytes"]:
        check("The scrape has %s" % name, name in values, sorted(values)[:20])
    check("homed_store_bytes is the store's size on disk", values.get("homed_store_bytes", 0) > 4096,
          values.get("homed_store_bytes"))
    owner.close()


def check_refusals(port):
    answers = {
        "another path: 404": (b"GET /other HTTP/1.1\r\n\r\n", "404"),
        "another method: 405 with Allow: GET": (b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "405"),
        "not HTTP: 400": (b"hello there\r\n\r\n", "400"),
        "a request head past 8 KiB: 431": (b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n", "431"),
    }
    for what, (request, code) in answers.items():
        answer = http(port, request)
        check("The metrics port: " + what, status_line(answer).split(" ")[1:2] == [code], answer[:200])
    answer = http(port, b"POST /metrics HTTP/1.1\r\n\r\n")
    check("405 names the allowed method", b"\r\nAllow: GET\r\n" in answer, answer[:200])
    # A client that never finishes its request head is cut off (5 s), and others are served meanwhile.
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=20) as slow:
        slow.sendall(b"GET /metr")
        head, _ = scrape(port)
        served = head.startswith("HTTP/1.1 200")
        closed = slow.recv(1) == b""
    elapsed = time.monotonic() - start
    check("A client that stalls inside its request head is cut off after about 5 s; others are served meanwhile",
          served and closed and 4 <= elapsed <= 8, (served, closed, elapsed))
    # More than 64 open at once: the rest are closed at once, and the port serves again afterwards.
    held = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(80)]
    time.sleep(0.3)
    closed_at_once = 0
    for connection in held:
        connection.setblocking(False)
        try:
            closed_at_once += connection.recv(1) == b""
        except BlockingIOError:
            pass
    for connection in held:
        connection.close()
    time.sleep(0.2)
    head, _ = scrape(port)
    check("Past 64 connections open at once the rest are closed; the port serves again after",
          closed_at_once >= 16 and head.startswith("HTTP/1.1 200"), (closed_at_once, head[:40]))


def check_prometheus(server, port, directory):
    binary = shutil.which("prometheus")
    check("Debian's prometheus is installed (scripts/install-packages.sh)", binary is not None)
    if binary is None:
        return
    config = os.path.join(directory, "prometheus.yml")
    with open(config, "w") as file:
        file.write("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: homed\n"
                   "    static_configs:\n      - targets: ['127.0.0.1:%d']\n" % port)
    web = free_port()
    log = open(os.path.join(directory, "prometheus.log"), "wb")
    process = subprocess.Popen([binary, "--config.file=" + config, "--storage.tsdb.path=" + os.path.join(directory, "tsdb"),
                                "--web.listen-address=127.0.0.1:%d" % web], stdout=log, stderr=log)
    try:
        owner = server.owner()
        for _ in range(20):
            owner.unary(HOME + "ListHomes")

        def query(expression):
            url = "http://127.0.0.1:%d/api/v1/query?query=%s" % (web, urllib.parse.quote(expression))
            with urllib.request.urlopen(url, timeout=5) as answer:
                result = json.load(answer)["data"]["result"]
            return [float(series["value"][1]) for series in result]

        results = {}
        expressions = {
            "calls": 'homed_calls_total{method="home.v1.HomeService/ListHomes",code="OK"}',
            "up": 'up{job="homed"}',
            "latency": 'histogram_quantile(0.99, sum by (le) (rate(homed_call_duration_seconds_bucket[1m])))',
            "commits": "homed_commits_total",
        }
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                results = {name: query(expression) for name, expression in expressions.items()}
                if all(results.values()) and results["latency"][0] == results["latency"][0]:  # not NaN
                    break
            except OSError:
                pass
            owner.unary(HOME + "ListHomes")
            time.sleep(1)
        check("Prometheus scrapes homed: up is 1", results.get("up") == [1.0], results)
        check("Prometheus: homed_calls_total of ListHomes OK is at least the 20 calls made",
              (results.get("calls") or [0])[0] >= 20, results)
        check("Prometheus: homed_commits_total is at least the server's first commit",
              (results.get("commits") or [0])[0] >= 1, results)
        latency = (results.get("latency") or [float("nan")])[0]
        check("Prometheus: histogram_quantile over the call latency buckets gives a p99 under a second",
              0 < latency < 1, results)
        owner.close()
    finally:
        process.terminate()
        process.wait(10)


def check_everything(server):
    port = free_port()
    server.arguments += ["--metrics-port", str(port)]
    server.start()
    check_exposition(server, port)
    check_refusals(port)
    with tempfile.TemporaryDirectory() as directory:
        check_prometheus(server, port, directory)


if __name__ == "__main__":
    run_checks(check_everything)
