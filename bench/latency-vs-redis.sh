#!/usr/bin/env bash
# Latency at a fixed offered rate (open loop) against Redis, one client for both: cload
# (bench/cload/cload.c) with --rate, where calls are due on a schedule whatever the answers and
# latency counts from when each call was due (coordinated-omission corrected), so a server that falls
# behind shows it. home.v1.Health/Check against GET, 50 connections, at most 16 in flight on each.
#
# Rows: half of Redis's closed-loop peak at 50 × 16 (the call-path target: homed's p99 at most 1.5×
# Redis's), half of homed's own peak, both with calls due in bursts of 16 per connection (the shape
# of the pipelined load the peaks were measured with), and 100,000 calls/s due one at a time. Each
# row runs REPEATS times, the two servers alternating; the table lists every run, the median ratio of
# the p99s, and the p99s of all runs pooled (each server's histograms summed: a single run's p99 swings
# several-fold here for either server, so the pooled ratio is the one to read). Servers on CPU 0, the client on CPU 1 (it spins between due calls, so its core
# is always busy). Run from the repository root:  bench/latency-vs-redis.sh > /tmp/latency.md
#
# Environment: SECONDS_PER_RUN (default 5), REPEATS (default 3).
# (`loadgen unary --rate` does the same in Swift but tops out at about 530,000 calls/s on one core.)
set -euo pipefail
. "$(dirname "$0")/lib/rates.sh"
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${SECONDS_PER_RUN:-5}"
REPEATS="${REPEATS:-3}"
HOMED_PORT=7435
REDIS_PORT=6395

scripts/install-packages.sh
if ! command -v redis-server >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
scripts/build-release.sh --product homed >&2
BIN="$(swift build -c release --show-bin-path)"
build_cload
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

open_loop() {  # hrpc|redis rate burst histogram-file: "achieved p50 p90 p99 p99.9 max"
    local port=$HOMED_PORT
    local request=(home.v1.Health/Check "")
    if [ "$1" = redis ]; then port=$REDIS_PORT request=(GET key); fi
    taskset -c 1 "$CLOAD" --rate "$2" --burst "$3" --histogram "$4" "$1" 127.0.0.1 "$port" 50 16 "$SECONDS_PER_RUN" 1 \
        "${request[@]}" || { echo "cload failed" >&2; exit 1; }
}

redis_peak=$(cload_rate redis "$REDIS_PORT" 50 16 GET key)
homed_peak=$(cload_rate hrpc "$HOMED_PORT" 50 16 home.v1.Health/Check "")
echo "Closed-loop peaks at 50 × 16 (cload, median of $REPEATS): Redis GET $redis_peak/s, homed Health/Check $homed_peak/s."
echo
echo "| offered rate | burst | run | homed achieved | homed p50 / p99 / p99.9 µs | redis achieved | redis p50 / p99 / p99.9 µs | p99 ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for row in "$((redis_peak / 2)) 16 half Redis's peak" "$((homed_peak / 2)) 16 half homed's peak" "100000 1 fixed"; do
    read -r rate burst label <<<"$row"
    ratios=()
    rm -f "$WORK/ours.histogram" "$WORK/theirs.histogram"
    for run in $(seq "$REPEATS"); do
        read -r ours_rate ours_p50 _ ours_p99 ours_p999 _ <<<"$(open_loop hrpc "$rate" "$burst" "$WORK/ours.histogram")"
        read -r theirs_rate theirs_p50 _ theirs_p99 theirs_p999 _ <<<"$(open_loop redis "$rate" "$burst" "$WORK/theirs.histogram")"
        ratios+=("$(ratio "$ours_p99" "$theirs_p99")")
        echo "| $rate/s ($label) | $burst | $run | $ours_rate | $ours_p50 / $ours_p99 / $ours_p999 |" \
            "$theirs_rate | $theirs_p50 / $theirs_p99 / $theirs_p999 | ${ratios[-1]} |"
    done
    echo "| | | median | | | | | $(printf '%s\n' "${ratios[@]}" | median) |"
    read -r ours_p50 _ ours_p99 ours_p999 _ < <("$CLOAD" --percentiles "$WORK/ours.histogram")
    read -r theirs_p50 _ theirs_p99 theirs_p999 _ < <("$CLOAD" --percentiles "$WORK/theirs.histogram")
    echo "| | | pooled | | $ours_p50 / $ours_p99 / $ours_p999 | | $theirs_p50 / $theirs_p99 / $theirs_p999 |" \
        "**$(ratio "$ours_p99" "$theirs_p99")** |"
done
