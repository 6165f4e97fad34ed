#!/usr/bin/env bash
# Builds the C client SDK and runs its test against a homed of its own (TCP on a free port and a
# Unix-domain socket, in a temporary directory), then installs the SDK there and builds the example
# against the installed copy. scripts/test.sh runs it after the Swift tests.
set -euo pipefail
cd "$(dirname "$0")"
ROOT="$(cd ../.. && pwd)"

make -s
# The fuzzer's seeds (fuzz/corpus, with the inputs it once crashed or hung on), replayed under
# AddressSanitizer and UndefinedBehaviorSanitizer: a regression fails here, not only when someone
# fuzzes. Linking prints the gold linker's notes about sanitizer symbols: not ours.
make -s fuzz >/dev/null 2>&1 || { make fuzz >&2; exit 1; }
timeout 120 build/fuzz-frames -timeout=10 fuzz/corpus/* 2>"${TMPDIR:-/tmp}/fuzz-replay.log" \
    || { cat "${TMPDIR:-/tmp}/fuzz-replay.log" >&2; echo "the C SDK failed on a fuzzer seed" >&2; exit 1; }
(cd "$ROOT" && swift build --product homed >/dev/null)
HOMED="$(cd "$ROOT" && swift build --show-bin-path)/homed"

WORK="$(mktemp -d)"
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
(cd "$WORK" && exec "$HOMED" --port "$PORT" --unix-socket "$WORK/homed.sock" --log-level debug \
    --keepalive-interval 2 --keepalive-timeout 2) >"$WORK/homed.log" 2>&1 &
HOMED_PID=$!
trap 'kill "$HOMED_PID" 2>/dev/null || true; wait "$HOMED_PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do
    [ -s "$WORK/homed-owner.token" ] && [ -S "$WORK/homed.sock" ] && break
    sleep 0.1
done
build/sdk-test "127.0.0.1:$PORT" "$WORK/homed-owner.token" "$WORK/homed.sock" 4 || { cat "$WORK/homed.log" >&2; exit 1; }
# The trace id the test set is in the server's line for that call.
grep -q 'method=home.v1.Health/Check .*trace-id=c-sdk-trace-7\|trace-id=c-sdk-trace-7.*method=home.v1.Health/Check' "$WORK/homed.log" \
    || { echo "no log line of a call with trace-id c-sdk-trace-7" >&2; exit 1; }

# The installed SDK builds and runs the example as a user's program would: through pkg-config.
make -s install PREFIX="$WORK/install"
FLAGS="$(PKG_CONFIG_PATH="$WORK/install/lib/pkgconfig" pkg-config --cflags --libs homerpc)"
# shellcheck disable=SC2086 # FLAGS is a list of compiler flags
cc -std=c11 -Wall -Wextra -Werror examples/quickstart.c $FLAGS -o "$WORK/quickstart"
"$WORK/quickstart" "Installed SDK Home" Kitchen "127.0.0.1:$PORT" "$WORK/homed-owner.token"

# A second server that closes idle connections after a second.
IDLE_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
mkdir -p "$WORK/idle"
(cd "$WORK/idle" && exec "$HOMED" --port "$IDLE_PORT" --log-level warning --idle-timeout 1) >"$WORK/idle.log" 2>&1 &
IDLE_PID=$!
for _ in $(seq 100); do (: >"/dev/tcp/127.0.0.1/$IDLE_PORT") 2>/dev/null && break; sleep 0.1; done
build/sdk-test --idle "127.0.0.1:$IDLE_PORT" 1 || { cat "$WORK/idle.log" >&2; exit 1; }
kill "$IDLE_PID" && wait "$IDLE_PID" || { echo "the idle-timeout homed did not stop cleanly" >&2; exit 1; }

# A third that requires mutual TLS, with the certificates of scripts/make-test-certificates.sh.
TLS_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
mkdir -p "$WORK/tls"
"$ROOT/scripts/make-test-certificates.sh" "$WORK/certs"
(cd "$WORK/tls" && exec "$HOMED" --port "$TLS_PORT" --log-level notice --tls-cert "$WORK/certs/server.pem" \
    --tls-key "$WORK/certs/server.key" --tls-client-ca "$WORK/certs/ca.pem") >"$WORK/tls.log" 2>&1 &
TLS_PID=$!
for _ in $(seq 100); do [ -s "$WORK/tls/homed-owner.token" ] && (: >"/dev/tcp/127.0.0.1/$TLS_PORT") 2>/dev/null && break; sleep 0.1; done
build/sdk-test --tls "127.0.0.1:$TLS_PORT" "$WORK/tls/homed-owner.token" "$WORK/certs" || { cat "$WORK/tls.log" >&2; exit 1; }
kill "$TLS_PID" && wait "$TLS_PID" || { echo "the TLS homed did not stop cleanly" >&2; exit 1; }

# Last, as it stops the server: SIGTERM with a subscription open.
build/sdk-test --drain "127.0.0.1:$PORT" "$WORK/homed-owner.token" "$HOMED_PID" || { cat "$WORK/homed.log" >&2; exit 1; }
wait "$HOMED_PID" || { echo "homed exited with $? after the drain" >&2; exit 1; }
