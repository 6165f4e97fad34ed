#!/usr/bin/env bash
# Two homed builds side by side: the durable store write (UpdateActionTargetValue, bench_scene's
# request) against each, in alternating runs of one client (cload), both servers on CPU 0 and the
# client on CPU 1. For a change to how commits are made, where a ratio against Redis moves too
# little to see it: each line gives both servers' calls/s, their CPU (both threads, from /proc) per
# call, and the row changes each of their commits carried in that run (`rpc-client info`).
# Run from the repository root, with two release binaries copied aside, for example:
#   cp .build/release/homed /tmp/homed-before   # (then change, rebuild)
#   bench/homed-ab.sh /tmp/homed-before .build/release/homed
#
# Environment: CONNECTIONS (default 50), DEPTH (default 1), RUNS (default 6), SECONDS_PER_RUN
# (default 3).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: bench/homed-ab.sh HOMED-A HOMED-B" >&2; exit 64; }
HOMED_A=$(realpath "$1")
HOMED_B=$(realpath "$2")
. "$(dirname "$0")/lib/pair-accessory.sh"
. "$(dirname "$0")/lib/rates.sh"
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${SECONDS_PER_RUN:-3}"
CONNECTIONS="${CONNECTIONS:-50}"
DEPTH="${DEPTH:-1}"
PORT_A=7475
PORT_B=7476
scripts/build-release.sh --product rpc-client >&2
BIN="$(swift build -c release --show-bin-path)"
build_cload

WORK_A="$(mktemp -d)"
WORK_B="$(mktemp -d)"
cleanup() {
    stop_simulator "$WORK_A"
    stop_simulator "$WORK_B"
    kill "${PID_A:-}" "${PID_B:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK_A" "$WORK_B"
}
trap cleanup EXIT
(cd "$WORK_A" && exec taskset -c 0 "$HOMED_A" --port "$PORT_A" --log-level warning --max-connections 1000) &
PID_A=$!
(cd "$WORK_B" && exec taskset -c 0 "$HOMED_B" --port "$PORT_B" --log-level warning --max-connections 1000) &
PID_B=$!
for port in "$PORT_A" "$PORT_B"; do
    for _ in $(seq 100); do "$BIN/rpc-client" health --endpoint "127.0.0.1:$port" >/dev/null 2>&1 && break; sleep 0.1; done
done
READ_A=$(bench_lamp "$BIN" "127.0.0.1:$PORT_A" "$WORK_A/homed-owner.token" "$WORK_A")
WRITE_A=$(bench_scene "$BIN" "127.0.0.1:$PORT_A" "$WORK_A/homed-owner.token" "$READ_A")
READ_B=$(bench_lamp "$BIN" "127.0.0.1:$PORT_B" "$WORK_B/homed-owner.token" "$WORK_B")
WRITE_B=$(bench_scene "$BIN" "127.0.0.1:$PORT_B" "$WORK_B/homed-owner.token" "$READ_B")

# user + system ticks (1/100 s) of every thread of the process
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# "commits row-changes" so far, from home.v1.ServerInfo/Get
commit_counts() {
    "$BIN/rpc-client" info --endpoint "127.0.0.1:$1" --token-file "$2/homed-owner.token" --json |
        python3 -c 'import json, sys; c = json.load(sys.stdin)["commits"]; print(c["count"], c["changes"])'
}
# One run against a server; prints "calls/s cpu-µs-a-call row-changes-a-commit".
#   measure PID PORT REQUEST-HEX WORK
measure() {
    local ticks_before ticks_after commits_before changes_before commits_after changes_after rate
    ticks_before=$(cpu_ticks "$1")
    read -r commits_before changes_before < <(commit_counts "$2" "$4")
    rate=$(cload_once "$CONNECTIONS" "$DEPTH" hrpc "$2" home.v1.HomeService/UpdateActionTargetValue "$3" \
        "$4/homed-owner.token")
    ticks_after=$(cpu_ticks "$1")
    read -r commits_after changes_after < <(commit_counts "$2" "$4")
    # cload_once runs a second's warm-up, then SECONDS_PER_RUN measured: the CPU covers both.
    awk -v rate="$rate" -v ticks=$((ticks_after - ticks_before)) -v seconds="$SECONDS_PER_RUN" \
        -v commits=$((commits_after - commits_before)) -v changes=$((changes_after - changes_before)) \
        'BEGIN { printf "%d %.2f %.1f\n", rate, ticks * 10000 / (rate * (seconds + 1)), changes / commits }'
}

echo "| run | A calls/s | A CPU µs a call | A row changes a commit | B calls/s | B CPU µs a call | B row changes a commit |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for run in $(seq "${RUNS:-6}"); do
    read -r rate_a cpu_a batch_a < <(measure "$PID_A" "$PORT_A" "$WRITE_A" "$WORK_A")
    read -r rate_b cpu_b batch_b < <(measure "$PID_B" "$PORT_B" "$WRITE_B" "$WORK_B")
    echo "| $run | $rate_a | $cpu_a | $batch_a | $rate_b | $cpu_b | $batch_b |"
done
