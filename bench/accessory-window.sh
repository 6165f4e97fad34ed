#!/usr/bin/env bash
# Forwarded writes (home.v1.HomeService/WriteCharacteristic) against one homed, alternating the lean
# accessory's window: the protocol's 64 messages, then 64 + EXTRA_CREDIT. With CONNECTIONS x DEPTH
# writes in flight to one accessory, its window and the server's MAX_CONCURRENT_STREAMS (how many
# answers it may have in flight) decide how much of the burst flows at once (docs/API.md,
# "Commands"). homed on CPU 0, cload and the accessory on CPU 1, as in characteristic-vs-redis.sh.
# Run from the repository root:  bench/accessory-window.sh
#
# Environment: SHAPE (CONNECTIONSxDEPTH, default 50x16), RUNS (of each window, default 8),
# SECONDS_PER_RUN (default 4), EXTRA_CREDIT (default 4096), HOMED_ARGS (e.g.
# "--max-concurrent-streams 1000"). Prints a line per run, then the medians.
set -euo pipefail
. "$(dirname "$0")/lib/pair-accessory.sh"
. "$(dirname "$0")/lib/rates.sh"
cd "$(dirname "$0")/.."
SHAPE="${SHAPE:-50x16}"
RUNS="${RUNS:-8}"
SECONDS_PER_RUN="${SECONDS_PER_RUN:-4}"
EXTRA_CREDIT="${EXTRA_CREDIT:-4096}"
HOMED_PORT=7433

scripts/install-packages.sh
for product in homed rpc-client; do scripts/build-release.sh --product "$product" >&2; done
BIN="$(swift build -c release --show-bin-path)"
build_cload
WORK="$(mktemp -d)"
cleanup() {
    stop_simulator "$WORK"
    kill "${HOMED_PID:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
# shellcheck disable=SC2086 # HOMED_ARGS is a list of flags
(cd "$WORK" && exec taskset -c 0 "$BIN/homed" --port "$HOMED_PORT" --log-level warning --max-connections 1000 ${HOMED_ARGS:-}) &
HOMED_PID=$!
sleep 1
WRITE_HEX=$(bench_lamp "$BIN" "127.0.0.1:$HOMED_PORT" "$WORK/homed-owner.token" "$WORK")1a021032

for _ in $(seq "$RUNS"); do
    for window in 64 $((64 + EXTRA_CREDIT)); do
        lean_accessory 127.0.0.1 "$HOMED_PORT" "$WORK" $((window - 64 > 0 ? window - 64 : 0))
        rate=$(cload_once "${SHAPE%x*}" "${SHAPE#*x}" hrpc "$HOMED_PORT" \
            home.v1.HomeService/WriteCharacteristic "$WRITE_HEX" "$WORK/homed-owner.token")
        echo "window $window: $rate writes/s"
        echo "$window $rate" >>"$WORK/rates"
    done
done
for window in 64 $((64 + EXTRA_CREDIT)); do
    echo "median, window $window: $(awk -v w="$window" '$1 == w { print $2 }' "$WORK/rates" | median) writes/s"
done
