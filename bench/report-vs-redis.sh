#!/usr/bin/env bash
# The durable write without the accessory's round trip, against Redis's SET with appendfsync always,
# one call at a time on one connection, in alternating pairs (a run against homed, then one against
# Redis), both loaded by one client, bench/report-loop/report_loop.c, the same way: a write, a poll
# and a read per call. Ours is an accessory's home.v1.AccessoryLink/ReportValues (through the C SDK):
# each report changes a characteristic, so each is a cache update, an event and an fsynced commit
# before its answer, what a controller's WriteCharacteristic does once the accessory accepted the
# write; Redis's is a SET of alternating values. bench/characteristic-vs-redis.sh measures the whole
# write, accessory included; this one shows how much of the difference from SET is the accessory's
# round trip.
# Servers on CPU 0, clients on CPU 1. Run from the repository root:  bench/report-vs-redis.sh
#
# Environment: PAIRS (default 8), SECONDS_PER_RUN (default 4).
set -euo pipefail
. "$(dirname "$0")/lib/rates.sh"
cd "$(dirname "$0")/.."
PAIRS="${PAIRS:-8}"
SECONDS_PER_RUN="${SECONDS_PER_RUN:-4}"
HOMED_PORT=7433
REDIS_PORT=6393

scripts/install-packages.sh
command -v redis-server >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
scripts/build-release.sh --product homed >&2
BIN="$(swift build -c release --show-bin-path)"
make -s -C clients/c
WORK="$(mktemp -d)"
SDK=clients/c
cc -std=c11 -O2 -Wall -Wextra -Werror -I$SDK/include -I$SDK/generated bench/report-loop/report_loop.c \
    $SDK/build/libhomerpc.a $(pkg-config --libs libprotobuf-c) -o "$WORK/report_loop"

cleanup() {
    kill "${HOMED_PID:-}" "${REDIS_PID:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
(cd "$WORK" && exec taskset -c 0 "$BIN/homed" --port "$HOMED_PORT" --log-level warning) &
HOMED_PID=$!
mkdir -p "$WORK/redis"
taskset -c 0 redis-server --port "$REDIS_PORT" --dir "$WORK/redis" --save "" --appendonly yes --appendfsync always \
    --daemonize no --loglevel warning >/dev/null &
REDIS_PID=$!
sleep 1

summary=$(for _ in $(seq "$PAIRS"); do
    ours=$(taskset -c 1 "$WORK/report_loop" homed "127.0.0.1:$HOMED_PORT" "$WORK/homed-owner.token" "$SECONDS_PER_RUN" 1)
    theirs=$(taskset -c 1 "$WORK/report_loop" redis 127.0.0.1 "$REDIS_PORT" "$SECONDS_PER_RUN" 1)
    echo "$ours $theirs"
done | pair_summary)
read -r ours theirs median_ratio sum_ratio low high up <<<"$summary"
echo "| workload (1 connection, depth 1) | homed calls/s | Redis calls/s | ratio of medians | ratio of sums | pair ratios | pairs ≥ 1 |"
echo "|---|---:|---:|---:|---:|---|---|"
echo "| ReportValues vs SET (appendfsync always), $PAIRS pairs of ${SECONDS_PER_RUN} s | $ours | $theirs | $median_ratio | $sum_ratio | $low–$high | $up |"
