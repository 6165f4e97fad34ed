#!/usr/bin/env bash
# Unary request/response throughput of homed against redis-server GET, side by side in one run, on
# loopback: 1 and 50 connections, pipeline depth 1 and 16, each pair of columns with one client for
# both servers: loadgen (over our protocol and over RESP), and cload (bench/cload/cload.c, a C
# client with one code path for both protocols, which leaves both servers saturated where loadgen
# saturates first); redis-benchmark as a reference column. Each server is pinned to
# CPU 0 and each load generator to CPU 1 (taskset), the same way for both. Writes bench/RESULTS.md's
# unary section to stdout; run from the repository root:  bench/unary-vs-redis.sh > /tmp/unary.md
#
# Environment: SECONDS_PER_RUN (default 5), REPEATS (default 3; the median is reported).
#
#   bench/unary-vs-redis.sh --pairs   # only cload, in alternating pairs (PAIRS, default 8, of
#                                     # SECONDS_PER_RUN, default 4 here): one run against homed, then
#                                     # one against Redis, so both see the same machine
PAIRS_ONLY=false
[ "${1:-}" = "--pairs" ] && PAIRS_ONLY=true && SECONDS_PER_RUN="${SECONDS_PER_RUN:-4}"
set -euo pipefail
. "$(dirname "$0")/lib/rates.sh"
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${SECONDS_PER_RUN:-5}"
REPEATS="${REPEATS:-3}"
HOMED_PORT=7431
REDIS_PORT=6391

scripts/install-packages.sh
if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
scripts/build-release.sh --product homed >&2
$PAIRS_ONLY || scripts/build-release.sh --product loadgen >&2
BIN="$(swift build -c release --show-bin-path)"
build_cload

cleanup() { kill "${HOMED_PID:-}" "${REDIS_PID:-}" 2>/dev/null || true; }
trap cleanup EXIT
taskset -c 0 "$BIN/homed" --port "$HOMED_PORT" --log-level warning --max-connections 1000 &
HOMED_PID=$!
taskset -c 0 redis-server --port "$REDIS_PORT" --save "" --appendonly no --daemonize no --loglevel warning >/dev/null &
REDIS_PID=$!
sleep 1
redis-cli -p "$REDIS_PORT" set key:__rand_int__ xxx >/dev/null

homed_rate() {  # connections depth
    loadgen_rate --endpoint "127.0.0.1:$HOMED_PORT" --connections "$1" --depth "$2"
}

if $PAIRS_ONLY; then
    echo "| shape | homed median calls/s | redis median GET/s | ratio of medians | ratio of sums | pair ratios | pairs ≥ 1 |"
    echo "|---|---:|---:|---:|---:|---|---:|"
    for shape in "1 1" "1 16" "50 1" "50 16"; do
        read -r connections depth <<<"$shape"
        read -r ours theirs medians sums low high up < <(
            cload_pairs "$connections" "$depth" "$HOMED_PORT" "home.v1.Health/Check" "$REDIS_PORT" "GET key:__rand_int__"
        )
        echo "| $connections × $depth | $ours | $theirs | $medians | $sums | $low–$high | $up |"
    done
    exit 0
fi

echo "| connections | pipeline depth | homed calls/s (loadgen) | redis GET/s (loadgen) | ratio | homed calls/s (cload) | redis GET/s (cload) | ratio | redis GET/s (redis-benchmark) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for connections in 1 50; do
    for depth in 1 16; do
        guess=$(( connections * depth * 20000 ))
        if [ "$depth" -eq 1 ] && [ "$guess" -gt 100000 ]; then guess=100000; fi
        if [ "$guess" -gt 1500000 ]; then guess=1500000; fi
        ours=$(homed_rate "$connections" "$depth")
        theirs=$(loadgen_redis_rate GET "$connections" "$depth")
        ours_c=$(cload_rate hrpc "$HOMED_PORT" "$connections" "$depth" home.v1.Health/Check "")
        theirs_c=$(cload_rate redis "$REDIS_PORT" "$connections" "$depth" GET key:__rand_int__)
        reference=$(redis_benchmark_rate get "$connections" "$depth" "$guess")
        echo "| $connections | $depth | $ours | $theirs | $(ratio "$ours" "$theirs") | $ours_c | $theirs_c | $(ratio "$ours_c" "$theirs_c") | $reference |"
    done
done
