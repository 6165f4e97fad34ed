#!/usr/bin/env bash
# Change notification fan-out against Redis pub/sub, side by side in one run, with one client for
# both (loadgen fanout): one characteristic's value changes at an open-loop rate (WriteCharacteristic,
# answered once fsynced; the event follows the commit) and 1, 10 and 100 subscribers receive each
# change (Subscribe with the characteristic named); against PUBLISH to one channel with 1, 10 and 100
# SUBSCRIBE connections (Redis does not persist pub/sub). Latency runs from when each change was sent
# to its delivery. Then the p99 at 20,000 changes/s for 1 and 10 subscribers over POOL_RUNS runs of
# each server, alternating, their latencies pooled (one run's p99 swings by half either way here).
# With each homed run, its commits of 2 ms or more (warm-up included, from ServerInfo).
# Then a slow-subscriber check: 10 subscribers that never take anything beside one that reads, for
# STALL_SECONDS, with the server's RSS before and after. Last, the pooled p99 again with the
# accessory itself as the producer (ReportValues on its link, as a sensor reports a reading): the
# change is the accessory's, with no round trip to it before the commit.
# Servers on CPU 0, load on CPU 1. Run from the repository root:
#   bench/fanout-vs-redis.sh > /tmp/fanout.md
#
# Environment: SECONDS_PER_RUN (default 5), RATES (default "1000 5000 20000"), POOL_RUNS (5),
# STALL_SECONDS (30).
set -euo pipefail
. "$(dirname "$0")/lib/pair-accessory.sh"
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${SECONDS_PER_RUN:-5}"
RATES="${RATES:-1000 5000 20000}"
POOL_RUNS="${POOL_RUNS:-5}"
STALL_SECONDS="${STALL_SECONDS:-30}"
HOMED_PORT=7433
REDIS_PORT=6393

scripts/install-packages.sh
if ! command -v redis-server >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
for product in homed loadgen rpc-client; do scripts/build-release.sh --product "$product" >&2; done
BIN="$(swift build -c release --show-bin-path)"
WORK="$(mktemp -d)"

cleanup() {
    stop_simulator "$WORK"
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
rc() { "$BIN/rpc-client" "$@" --endpoint "127.0.0.1:$HOMED_PORT" --token-file "$WORK/homed-owner.token"; }
home=$(rc home add Bench --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
# A custom characteristic: an unsigned integer without limits carries each change's sequence number.
characteristic=$(
    pair_accessory "$BIN" "127.0.0.1:$HOMED_PORT" "$WORK/homed-owner.token" Bench "$WORK" "{\"name\": \"Counter\",
        \"services\": [{\"type\": \"B0A40001-0000-1000-8000-000000000001\", \"characteristics\": [
        {\"type\": \"B0A40002-0000-1000-8000-000000000001\",
         \"properties\": {\"readable\": true, \"writable\": true, \"supportsEventNotification\": true},
         \"metadata\": {\"format\": \"CHARACTERISTIC_FORMAT_UINT32\"}}]}]}" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["accessories"][0]["services"][0]["characteristics"][0]["id"])'
)

fanout() {  # target subscribers rate [stalled [seconds [more loadgen options...]]]
    local extra=()
    [ "$1" = homerpc ] && extra=(--token-file "$WORK/homed-owner.token" --home-id "$home" --characteristic-id "$characteristic")
    local port=$HOMED_PORT; [ "$1" = redis ] && port=$REDIS_PORT
    taskset -c 1 "$BIN/loadgen" fanout --target "$1" --endpoint "127.0.0.1:$port" --subscribers "$2" --rate "$3" \
        --stalled "${4:-0}" --duration "${5:-$SECONDS_PER_RUN}" --warmup 1 --json "${extra[@]}" "${@:6}"
}
pooled() {  # histogram-file (loadgen --histogram-file, several runs): "p50 p99" µs over all of them
    python3 - "$1" <<'PY'
import collections, math, sys
counts = collections.Counter()
for line in open(sys.argv[1]):
    value, count = line.split()
    counts[int(value)] += int(count)
total = sum(counts.values())
def at(fraction):
    rank, seen = max(1, math.ceil(fraction * total)), 0
    for value in sorted(counts):
        seen += counts[value]
        if seen >= rank:
            return value
print(at(0.50), at(0.99))
PY
}
field() { sed -E "s/.*\"$1\": ([0-9.]+).*/\1/" <<<"$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.2f", a / b }'; }
rss_kib() { awk '/VmRSS/ { print $2 }' "/proc/$1/status"; }
# homed's commits of 2 ms or more since it started (ServerInfo): a change waits for its commit, so
# a run's p99 moves with how many of the disk's slow syncs fell into it.
slow_commits() {
    rc info --json | python3 -c 'import json, sys; print(int(json.load(sys.stdin).get("commits", {}).get("slow", "0")))'
}

echo "| subscribers | changes/s offered | homed deliveries/s | redis deliveries/s | ratio | homed p50 / p99 µs | redis p50 / p99 µs |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for subscribers in 1 10 100; do
    for rate in $RATES; do
        ours=$(fanout homerpc "$subscribers" "$rate")
        theirs=$(fanout redis "$subscribers" "$rate")
        for out in "$ours" "$theirs"; do
            if [ "$(field errors "$out")" != 0 ]; then echo "loadgen reported errors: $out" >&2; exit 1; fi
        done
        echo "| $subscribers | $rate | $(field deliveries_per_second "$ours") | $(field deliveries_per_second "$theirs") |" \
            "$(ratio "$(field deliveries_per_second "$ours")" "$(field deliveries_per_second "$theirs")") |" \
            "$(field p50_us "$ours") / $(field p99_us "$ours") | $(field p50_us "$theirs") / $(field p99_us "$theirs") |"
    done
done

# pooled_p99 PRODUCER-DESCRIPTION [fanout options...]: the p99 at 20,000 changes/s for 1 and 10
# subscribers over POOL_RUNS runs of each server, alternating, every latency pooled.
pooled_p99() {
    local producer=$1
    shift
    echo
    echo "p99 at 20,000 changes/s, $producer; $POOL_RUNS runs of $SECONDS_PER_RUN s of each server (alternating), every latency pooled:"
    echo
    echo "| subscribers | homed p50 / p99 µs | redis p50 / p99 µs | homed p99 of each run | homed commits ≥ 2 ms in each run | redis p99 of each run |"
    echo "|---:|---:|---:|---|---|---|"
    for subscribers in 1 10; do
        rm -f "$WORK/ours.histogram" "$WORK/theirs.histogram"
        ours_runs=() theirs_runs=() slow_runs=()
        for _ in $(seq "$POOL_RUNS"); do
            slow_before=$(slow_commits)
            ours=$(fanout homerpc "$subscribers" 20000 0 "$SECONDS_PER_RUN" --histogram-file "$WORK/ours.histogram" "$@")
            slow_runs+=("$(($(slow_commits) - slow_before))")
            theirs=$(fanout redis "$subscribers" 20000 0 "$SECONDS_PER_RUN" --histogram-file "$WORK/theirs.histogram")
            for out in "$ours" "$theirs"; do
                if [ "$(field errors "$out")" != 0 ]; then echo "loadgen reported errors: $out" >&2; exit 1; fi
            done
            ours_runs+=("$(field p99_us "$ours")") theirs_runs+=("$(field p99_us "$theirs")")
        done
        read -r ours_p50 ours_p99 < <(pooled "$WORK/ours.histogram")
        read -r theirs_p50 theirs_p99 < <(pooled "$WORK/theirs.histogram")
        echo "| $subscribers | $ours_p50 / **$ours_p99** | $theirs_p50 / $theirs_p99 | ${ours_runs[*]} | ${slow_runs[*]} | ${theirs_runs[*]} |"
    done
}
pooled_p99 "a controller writing the value (WriteCharacteristic: a round trip to the accessory, then the commit)"

echo
echo "Slow subscribers: 1 reading subscriber, alone and beside 10 that never take anything, 20,000 changes/s."
echo
echo "| run | seconds | homed RSS before → after (KiB) | reader deliveries/s | reader p50 / p99 µs |"
echo "|---|---:|---:|---:|---:|"
alone=$(fanout homerpc 1 20000 0 "$SECONDS_PER_RUN")
echo "| reader alone | $SECONDS_PER_RUN | $(rss_kib "$HOMED_PID") | $(field deliveries_per_second "$alone") | $(field p50_us "$alone") / $(field p99_us "$alone") |"
before=$(rss_kib "$HOMED_PID")
fanout homerpc 1 20000 10 "$STALL_SECONDS" >"$WORK/stalled.json" &
LOAD_PID=$!
peak=$before
while kill -0 "$LOAD_PID" 2>/dev/null; do  # the peak while the stalled subscribers are connected
    now=$(rss_kib "$HOMED_PID"); [ "$now" -gt "$peak" ] && peak=$now
    sleep 1
done
wait "$LOAD_PID"
stalled=$(cat "$WORK/stalled.json")
echo "| beside 10 stalled | $STALL_SECONDS | $before → $peak (peak) | $(field deliveries_per_second "$stalled") | $(field p50_us "$stalled") / $(field p99_us "$stalled") |"

# The accessory reporting each new value itself (ReportValues on its link, as a sensor does): no
# round trip to the accessory before the commit. The link replaces the simulator's, so it stops.
stop_simulator "$WORK"
pooled_p99 "the accessory reporting the value (ReportValues on its link, then the commit)" \
    --report-as-accessory "$WORK/simulator.json"
