#!/usr/bin/env bash
# Unary request/response throughput of homed against redis-server GET, side by side in one run, on
# loopback: 1 and 50 connections, pipeline depth 1 and 16. Each server is pinned to CPU 0 and each
# load generator to CPU 1 (taskset), the same way for both. Writes bench/RESULTS.md's unary section
# to stdout; run from the repository root:  bench/unary-vs-redis.sh > /tmp/unary.md
#
# Environment: SECONDS_PER_RUN (default 5), REPEATS (default 3; the median is reported).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${SECONDS_PER_RUN:-5}"
REPEATS="${REPEATS:-3}"
HOMED_PORT=7431
REDIS_PORT=6391

scripts/install-packages.sh
if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
swift build -c release --product homed >&2
swift build -c release --product loadgen >&2
BIN="$(swift build -c release --show-bin-path)"

cleanup() { kill "${HOMED_PID:-}" "${REDIS_PID:-}" 2>/dev/null || true; }
trap cleanup EXIT
taskset -c 0 "$BIN/homed" --port "$HOMED_PORT" --log-level warning --max-connections 1000 &
HOMED_PID=$!
taskset -c 0 redis-server --port "$REDIS_PORT" --save "" --appendonly no --daemonize no --loglevel warning >/dev/null &
REDIS_PID=$!
sleep 1
redis-cli -p "$REDIS_PORT" set key:__rand_int__ xxx >/dev/null

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

homed_rate() {  # connections depth
    for _ in $(seq "$REPEATS"); do
        taskset -c 1 "$BIN/loadgen" unary --endpoint "127.0.0.1:$HOMED_PORT" --connections "$1" --depth "$2" \
            --duration "$SECONDS_PER_RUN" --warmup 1 --json | sed -E 's/.*"calls_per_second": ([0-9]+).*/\1/'
    done | median
}

redis_rate() {  # connections depth
    # redis-benchmark has no duration: size the request count from the rates seen here (about 20k/s
    # per in-flight request up to 100k/s unpipelined, 1.5M/s pipelined) to last about SECONDS_PER_RUN.
    local per_second=$(( $1 * $2 * 20000 ))
    if [ "$2" -eq 1 ] && [ "$per_second" -gt 100000 ]; then per_second=100000; fi
    if [ "$per_second" -gt 1500000 ]; then per_second=1500000; fi
    local requests=$(( per_second * SECONDS_PER_RUN ))
    for _ in $(seq "$REPEATS"); do
        taskset -c 1 redis-benchmark -p "$REDIS_PORT" -t get -c "$1" -P "$2" -n "$requests" -q --csv \
            | awk -F'","' '/GET/ { gsub(/"/, "", $2); print int($2) }'
    done | median
}

echo "| connections | pipeline depth | homed calls/s | redis GET/s | ratio |"
echo "|---:|---:|---:|---:|---:|"
for connections in 1 50; do
    for depth in 1 16; do
        ours=$(homed_rate "$connections" "$depth")
        theirs=$(redis_rate "$connections" "$depth")
        ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", a / b }')
        echo "| $connections | $depth | $ours | $theirs | $ratio |"
    done
done
