#!/usr/bin/env bash
# The characteristic path through the whole home API against Redis, side by side in one run, on
# loopback: a cached read (home.v1.HomeService/ReadCharacteristic) against GET, and a durable write
# (WriteCharacteristic, answered after its fsynced commit) against SET with appendfsync always and
# everysec; 1 and 50 connections, pipeline depth 1 and 16. Servers on CPU 0, load on CPU 1.
# Each ratio compares two columns of one client: loadgen speaks our protocol and RESP with the same
# loop, pipelining and timing code; cload (bench/cload/cload.c) is a C client with one code path for
# both protocols, cheap enough that the servers, not it, saturate. redis-benchmark is a reference.
# The written accessory is paired by `rpc-client accessory simulate`, then served by `cload accessory`
# (bench/lib/pair-accessory.sh, lean_accessory) on CPU 1 with the load: it answers each command at
# once, so that the rate is homed's, not the Swift simulator's.
# Run from the repository root:  bench/characteristic-vs-redis.sh > /tmp/characteristic.md
#
# Environment: SECONDS_PER_RUN (default 5), REPEATS (default 3; the median is reported).
#
#   bench/characteristic-vs-redis.sh --pairs   # only cload, in alternating pairs (PAIRS, default 8,
#                                              # of SECONDS_PER_RUN, default 4 here): a run against
#                                              # homed, then one against Redis, same machine for both;
#                                              # adds the durable store write without the accessory
#                                              # (UpdateActionTargetValue) against SET always;
#                                              # WORKLOADS picks some of "read always store"
set -euo pipefail
PAIRS_ONLY=false
[ "${1:-}" = "--pairs" ] && PAIRS_ONLY=true && SECONDS_PER_RUN="${SECONDS_PER_RUN:-4}"
. "$(dirname "$0")/lib/pair-accessory.sh"
. "$(dirname "$0")/lib/rates.sh"
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${SECONDS_PER_RUN:-5}"
REPEATS="${REPEATS:-3}"
HOMED_PORT=7432
REDIS_PORT=6392

scripts/install-packages.sh
if ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
for product in homed rpc-client $($PAIRS_ONLY || echo loadgen); do scripts/build-release.sh --product "$product" >&2; done
BIN="$(swift build -c release --show-bin-path)"
build_cload
WORK="$(mktemp -d)"

cleanup() {
    stop_simulator "$WORK"
    kill "${HOMED_PID:-}" "${REDIS_PID:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
(cd "$WORK" && exec taskset -c 0 "$BIN/homed" --port "$HOMED_PORT" --log-level warning --max-connections 1000) &
HOMED_PID=$!
sleep 1
READ_HEX=$(bench_lamp "$BIN" "127.0.0.1:$HOMED_PORT" "$WORK/homed-owner.token" "$WORK")
WRITE_HEX=${READ_HEX}1a021032
STORE_WRITE_HEX=$(bench_scene "$BIN" "127.0.0.1:$HOMED_PORT" "$WORK/homed-owner.token" "$READ_HEX")
lean_accessory 127.0.0.1 "$HOMED_PORT" "$WORK"

homed_rate() {  # method request-hex connections depth [--idempotency-keys]
    loadgen_rate --endpoint "127.0.0.1:$HOMED_PORT" --token-file "$WORK/homed-owner.token" \
        --method "home.v1.HomeService/$1" --request-hex "$2" --connections "$3" --depth "$4" "${@:5}"
}

start_redis() {  # extra redis-server arguments
    kill "${REDIS_PID:-}" 2>/dev/null || true
    wait "${REDIS_PID:-}" 2>/dev/null || true
    rm -rf "$WORK/redis" && mkdir -p "$WORK/redis"
    taskset -c 0 redis-server --port "$REDIS_PORT" --dir "$WORK/redis" --save "" --daemonize no --loglevel warning "$@" >/dev/null &
    REDIS_PID=$!
    sleep 1
}

homed_cload_rate() {  # method request-hex connections depth [hrpc-keyed]
    cload_rate "${5:-hrpc}" "$HOMED_PORT" "$3" "$4" "home.v1.HomeService/$1" "$2" "$WORK/homed-owner.token"
}

if $PAIRS_ONLY; then
    echo "| workload | shape | homed median calls/s | redis median ops/s | ratio of medians | ratio of sums | pair ratios | pairs ≥ 1 |"
    echo "|---|---|---:|---:|---:|---:|---|---:|"
    for workload in ${WORKLOADS:-read always store}; do
        case $workload in
            read)
                start_redis --appendonly no
                name="cached read vs GET" method=ReadCharacteristic hex=$READ_HEX redis_call="GET key:__rand_int__"
                protocol=hrpc
                ;;
            always)
                start_redis --appendonly yes --appendfsync always
                name="durable write vs SET (appendfsync always)" method=WriteCharacteristic hex=$WRITE_HEX
                redis_call="SET key:__rand_int__ xxx" protocol=hrpc-keyed
                ;;
            store)
                # The same durable path without the accessory's round trip: an action's target value.
                start_redis --appendonly yes --appendfsync always
                name="durable store write (UpdateActionTargetValue) vs SET (always)"
                method=UpdateActionTargetValue hex=$STORE_WRITE_HEX redis_call="SET key:__rand_int__ xxx"
                protocol=hrpc-keyed
                ;;
        esac
        for shape in "1 1" "1 16" "50 1" "50 16"; do
            read -r connections depth <<<"$shape"
            read -r ours theirs medians sums low high up < <(
                cload_pairs_of "$connections" "$depth" \
                    "$protocol $HOMED_PORT home.v1.HomeService/$method $hex $WORK/homed-owner.token" \
                    "redis $REDIS_PORT $redis_call"
            )
            echo "| $name | $connections × $depth | $ours | $theirs | $medians | $sums | $low–$high | $up |"
        done
    done
    exit 0
fi

echo "| workload | connections | depth | homed calls/s (loadgen) | redis ops/s (loadgen) | ratio | homed calls/s (cload) | redis ops/s (cload) | ratio | redis ops/s (redis-benchmark) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
start_redis --appendonly no
for connections in 1 50; do
    for depth in 1 16; do
        guess=$(( connections * depth * 20000 )); [ "$guess" -gt 1500000 ] && guess=1500000
        ours=$(homed_rate ReadCharacteristic "$READ_HEX" "$connections" "$depth")
        theirs=$(loadgen_redis_rate GET "$connections" "$depth")
        ours_c=$(homed_cload_rate ReadCharacteristic "$READ_HEX" "$connections" "$depth")
        theirs_c=$(cload_rate redis "$REDIS_PORT" "$connections" "$depth" GET key:__rand_int__)
        reference=$(redis_benchmark_rate get "$connections" "$depth" "$guess")
        echo "| cached read vs GET | $connections | $depth | $ours | $theirs | $(ratio "$ours" "$theirs") | $ours_c | $theirs_c | $(ratio "$ours_c" "$theirs_c") | $reference |"
    done
done
for fsync in always everysec; do
    start_redis --appendonly yes --appendfsync "$fsync"
    for connections in 1 50; do
        for depth in 1 16; do
            guess=$(( connections * depth * 5000 )); [ "$guess" -gt 400000 ] && guess=400000
            ours=$(homed_rate WriteCharacteristic "$WRITE_HEX" "$connections" "$depth" --idempotency-keys)
            theirs=$(loadgen_redis_rate SET "$connections" "$depth")
            ours_c=$(homed_cload_rate WriteCharacteristic "$WRITE_HEX" "$connections" "$depth" hrpc-keyed)
            theirs_c=$(cload_rate redis "$REDIS_PORT" "$connections" "$depth" SET key:__rand_int__ xxx)
            reference=$(redis_benchmark_rate set "$connections" "$depth" "$guess")
            echo "| durable write vs SET (appendfsync $fsync) | $connections | $depth | $ours | $theirs | $(ratio "$ours" "$theirs") | $ours_c | $theirs_c | $(ratio "$ours_c" "$theirs_c") | $reference |"
        done
    done
done
