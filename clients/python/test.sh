#!/usr/bin/env bash
# Generates the Python stubs from proto/ (generate.sh), starts a homed of its own with its gRPC door
# on a free port and a simulated accessory beside it, then runs the example, check_grpc.py and the
# hostile HTTP/2 peers of Tests/GRPCDoor against it. scripts/test.sh runs it; HOMED and RPC_CLIENT name the executables (default: the
# package's debug build).
set -euo pipefail
cd "$(dirname "$0")"
ROOT="$(cd ../.. && pwd)"
PYTHON="$(./generate.sh)"
BIN="$(cd "$ROOT" && swift build --show-bin-path)"
HOMED="${HOMED:-$BIN/homed}"
RPC_CLIENT="${RPC_CLIENT:-$BIN/rpc-client}"

WORK="$(mktemp -d)"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT="$(free_port)"
GRPC_PORT="$(free_port)"
(cd "$WORK" && exec "$HOMED" --port "$PORT" --grpc-port "$GRPC_PORT" --log-level notice) >"$WORK/homed.log" 2>&1 &
HOMED_PID=$!
SIMULATOR_PID=""
TLS_PID=""
cleanup() {
    [ -n "$SIMULATOR_PID" ] && kill "$SIMULATOR_PID" 2>/dev/null
    [ -z "$TLS_PID" ] || kill "$TLS_PID" 2>/dev/null || true
    kill "$HOMED_PID" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
for _ in $(seq 100); do
    [ -s "$WORK/homed-owner.token" ] && break
    sleep 0.1
done
# The accessory side speaks our protocol (the CLI's simulator); the check finds it over gRPC.
"$RPC_CLIENT" accessory simulate --endpoint "127.0.0.1:$PORT" --token-file "$WORK/homed-owner.token" \
    --name "Python Lamp" --setup-code 314-15-926 --state "$WORK/simulator.json" >"$WORK/simulator.log" 2>&1 &
SIMULATOR_PID=$!

fail() { echo "$1" >&2; cat "$WORK/homed.log" >&2; exit 1; }
"$PYTHON" example.py "127.0.0.1:$GRPC_PORT" "$WORK/homed-owner.token" "Python Home" Study \
    || fail "the Python example failed against homed's gRPC door"
"$PYTHON" check_grpc.py "127.0.0.1:$GRPC_PORT" "$WORK/homed-owner.token" "Python Lamp" 314-15-926 \
    || fail "the gRPC door check failed"
"$PYTHON" "$ROOT/Tests/GRPCDoor/hostile_http2.py" 127.0.0.1 "$GRPC_PORT" "$PORT" "$HOMED_PID" \
    || fail "a hostile HTTP/2 peer was not answered as it should be"

# grpcio over TLS and mutual TLS: a homed whose gRPC door requires a client certificate of the test CA.
"$ROOT/scripts/make-test-certificates.sh" "$WORK/certs"
TLS_PORT="$(free_port)"
TLS_GRPC_PORT="$(free_port)"
mkdir -p "$WORK/tls"
(cd "$WORK/tls" && exec "$HOMED" --port "$TLS_PORT" --grpc-port "$TLS_GRPC_PORT" --log-level notice \
    --tls-cert "$WORK/certs/server.pem" --tls-key "$WORK/certs/server.key" --tls-client-ca "$WORK/certs/ca.pem") \
    >"$WORK/tls.log" 2>&1 &
TLS_PID=$!
for _ in $(seq 100); do [ -s "$WORK/tls/homed-owner.token" ] && (: >"/dev/tcp/127.0.0.1/$TLS_GRPC_PORT") 2>/dev/null && break; sleep 0.1; done
HOMERPC_CA_FILE="$WORK/certs/ca.pem" HOMERPC_CERT_FILE="$WORK/certs/client.pem" HOMERPC_KEY_FILE="$WORK/certs/client.key" \
    "$PYTHON" example.py "localhost:$TLS_GRPC_PORT" "$WORK/tls/homed-owner.token" "TLS Home" Vault \
    || { cat "$WORK/tls.log" >&2; fail "the Python example failed over mutual TLS"; }
if HOMERPC_CA_FILE="$WORK/certs/ca.pem" timeout 60 "$PYTHON" example.py "localhost:$TLS_GRPC_PORT" \
    "$WORK/tls/homed-owner.token" "TLS Home" Vault >"$WORK/refused.log" 2>&1; then
    fail "grpcio without a client certificate was served by a homed requiring mutual TLS"
fi
grep -q "TLS failed" "$WORK/tls.log" || { cat "$WORK/tls.log" >&2; fail "the refused handshake was not logged"; }
kill "$TLS_PID" && wait "$TLS_PID" || fail "the TLS homed did not stop cleanly"
TLS_PID=""
