#!/usr/bin/env bash
# Latency at a fixed offered rate (open loop) against Redis, one client for both (loadgen unary
# --rate: calls start on schedule whatever the answers; latency counts from each call's intended
# start, so a server that falls behind shows it). The rate is half of Redis's closed-loop GET peak
# at 50 × 16, as the call-path target asks; a second row uses half of homed's own peak.
# home.v1.Health/Check against GET; 50 connections, at most 16 in flight each. Servers on CPU 0,
# load on CPU 1. Run from the repository root:  bench/latency-vs-redis.sh > /tmp/latency.md
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${SECONDS_PER_RUN:-5}"
HOMED_PORT=7435
REDIS_PORT=6395

scripts/install-packages.sh
if ! command -v redis-server >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
for product in homed loadgen; do swift build -c release --product "$product" >&2; done
BIN="$(swift build -c release --show-bin-path)"
WORK="$(mktemp -d)"
cleanup() {
    kill "${HOMED_PID:-}" "${REDIS_PID:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
(cd "$WORK" && exec taskset -c 0 "$BIN/homed" --port "$HOMED_PORT" --log-level warning) &
HOMED_PID=$!
taskset -c 0 redis-server --port "$REDIS_PORT" --dir "$WORK" --save "" --appendonly no --daemonize no \
    --loglevel warning >/dev/null &
REDIS_PID=$!
sleep 1

run() {  # target extra-arguments...
    local target=$1
    shift
    local port=$HOMED_PORT
    [ "$target" = redis ] && port=$REDIS_PORT
    out=$(taskset -c 1 "$BIN/loadgen" unary --target "$target" --endpoint "127.0.0.1:$port" --connections 50 \
        --depth 16 --duration "$SECONDS_PER_RUN" --warmup 1 --json "$@")
    if ! grep -q '"errors": 0,' <<<"$out"; then echo "loadgen reported errors: $out" >&2; exit 1; fi
    echo "$out"
}
field() { sed -E "s/.*\"$1\": ([0-9.]+).*/\1/" <<<"$2"; }

redis_peak=$(field calls_per_second "$(run redis --redis-command GET)")
homed_peak=$(field calls_per_second "$(run homerpc --method home.v1.Health/Check)")
echo "Closed-loop peaks at 50 × 16: Redis GET $redis_peak/s, homed Health/Check $homed_peak/s."
echo
echo "| offered rate | homed achieved | homed p50 / p99 µs | redis achieved | redis p50 / p99 µs | p99 ratio |"
echo "|---|---:|---:|---:|---:|---:|"
for label in "half Redis's peak" "half homed's peak"; do
    if [ "$label" = "half Redis's peak" ]; then rate=$((redis_peak / 2)); else rate=$((homed_peak / 2)); fi
    ours=$(run homerpc --method home.v1.Health/Check --rate "$rate")
    theirs=$(run redis --redis-command GET --rate "$rate")
    ratio=$(awk -v a="$(field p99_us "$ours")" -v b="$(field p99_us "$theirs")" 'BEGIN { printf "%.2f", a / b }')
    echo "| $rate/s ($label) | $(field calls_per_second "$ours") | $(field p50_us "$ours") / $(field p99_us "$ours") |" \
        "$(field calls_per_second "$theirs") | $(field p50_us "$theirs") / $(field p99_us "$theirs") | $ratio |"
done
