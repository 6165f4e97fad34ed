#!/usr/bin/env bash
# Instructions per call, counted by valgrind's callgrind (repeatable whatever else the machine does,
# unlike timings): homed serving home.v1.Health/Check and a cached ReadCharacteristic, redis-server
# serving GET, each driven by the same client (loadgen, over our protocol or RESP) at 1 × 1 and
# 50 × 16. Counters are zeroed after a warm-up, a fixed number of calls is made, and the dump's total
# is divided by it (every thread of the server counts; connection setup is amortised). Then a
# durable WriteCharacteristic at 50 × 16, forwarded to a simulated accessory (another process, not
# counted): its instructions on the event-loop thread, and on every thread (with the store's writer,
# whose share per write depends on how many writes each group commit takes); and the same for a
# durable write that stays in the store (UpdateActionTargetValue: no accessory in the way); then both
# writes at 1 × 1, where every write is a commit of its own; then the gRPC door's Check at 1 × 1
# and cached read at 50 × 16, driven by cload (gRPC over HTTP/2 through libnghttp2).
#
#   bench/instructions.sh            # the table, both servers
#   bench/instructions.sh --check    # homed only; fails if a count is above bench/instruction-budget.txt
#
# valgrind 3.19 cannot read a release homed's debug info, so a stripped copy is measured. With
# PROFILE_DIR=dir, only the debug info is stripped (function names stay) and the dumps are kept there
# for `callgrind_annotate` (homed.callgrind.1-01 to .8-01 for the event-loop thread, -02... for the
# others: Check 1 × 1, 50 × 16, the read's two, the write's and the store write's at 50 × 16, then
# the same two at 1 × 1, then the gRPC door's two).
set -euo pipefail
. "$(dirname "$0")/lib/pair-accessory.sh"
cd "$(dirname "$0")/.."
CHECK=false
[ "${1:-}" = "--check" ] && CHECK=true
CALLS_1X1="${CALLS_1X1:-20000}"
CALLS_50X16="${CALLS_50X16:-100000}"
WRITES_50X16="${WRITES_50X16:-20000}"
WRITES_1X1="${WRITES_1X1:-2000}"
GRPC_SECONDS="${GRPC_SECONDS:-5}"
HOMED_PORT=7434
GRPC_PORT=7439
REDIS_PORT=6394

scripts/install-packages.sh
need=()
command -v valgrind >/dev/null || need+=(valgrind)
$CHECK || command -v redis-server >/dev/null || need+=(redis-server)
if [ ${#need[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
for product in homed loadgen rpc-client; do scripts/build-release.sh --product "$product" >&2; done
BIN="$(swift build -c release --show-bin-path)"
. bench/lib/rates.sh
build_cload
WORK="$(mktemp -d)"
cleanup() {
    stop_simulator "$WORK"
    kill "${HOMED_PID:-}" "${REDIS_PID:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    if [ -n "${PROFILE_DIR:-}" ]; then mkdir -p "$PROFILE_DIR" && cp "$WORK"/*.callgrind.* "$PROFILE_DIR"/ 2>/dev/null; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

cp "$BIN/homed" "$WORK/homed-stripped" && strip ${PROFILE_DIR:+--strip-debug} "$WORK/homed-stripped"
(cd "$WORK" && exec valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$WORK/homed.callgrind" \
    ./homed-stripped --port "$HOMED_PORT" --grpc-port "$GRPC_PORT" --log-level warning 2>"$WORK/homed.valgrind") &
HOMED_PID=$!
for _ in $(seq 120); do
    "$BIN/rpc-client" health --endpoint "127.0.0.1:$HOMED_PORT" >/dev/null 2>&1 && break
    sleep 0.5
done
READ_HEX=$(bench_lamp "$BIN" "127.0.0.1:$HOMED_PORT" "$WORK/homed-owner.token" "$WORK")

if ! $CHECK; then
    (cd "$WORK" && exec valgrind --tool=callgrind --callgrind-out-file="$WORK/redis.callgrind" \
        redis-server --port "$REDIS_PORT" --save "" --appendonly no --daemonize no --loglevel warning \
        2>"$WORK/redis.valgrind" >/dev/null) &
    REDIS_PID=$!
    for _ in $(seq 120); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.5; done
    redis-cli -p "$REDIS_PORT" set homerpc:loadgen 50 >/dev/null
fi

dumps=0
count() {  # pid callgrind-file calls loadgen-arguments... : prints instructions per call
    local pid=$1 file=$2 calls=$3
    shift 3
    "$BIN/loadgen" unary "$@" --calls 2000 --json >/dev/null       # warm-up
    # The warm-up leaves its last calls in flight; forwarded writes among them still occupy the
    # accessory's command queue until answered: let them drain so the count starts from quiet.
    sleep "${SETTLE_SECONDS:-0}"
    callgrind_control -z "$pid" >/dev/null
    local out
    out=$("$BIN/loadgen" unary "$@" --calls "$calls" --json)
    if ! grep -q '"errors": 0,' <<<"$out"; then echo "loadgen reported errors: $out" >&2; exit 1; fi
    callgrind_control -d "$pid" >/dev/null
    per_call "$file" "$calls"
}
# The latest dump of callgrind file `file`, divided by `calls`: instructions per call on every
# thread (or, with COUNT_LOOP_THREAD=yes, on the event-loop thread, then on every thread).
per_call() {  # callgrind-file calls
    local file=$1 calls=$2
    # With --separate-threads=yes a dump is one file per thread, FILE.PART-01 (the first thread:
    # the event loop), FILE.PART-02...; without it, one file FILE.PART.
    local part
    part=$(ls "$file".* | sed -E 's/.*\.([0-9]+)(-[0-9]+)?$/\1/' | sort -n | tail -1)
    local files=("$file.$part" "$file.$part"-*)
    local existing=()
    for f in "${files[@]}"; do [ -f "$f" ] && existing+=("$f"); done
    local total loop
    total=$(awk -v calls="$calls" '/^summary:/ { sum += $2 } END { printf "%.0f", sum / calls }' "${existing[@]}")
    loop=$(awk -v calls="$calls" '/^summary:/ { printf "%.0f", $2 / calls }' "${existing[0]}")
    if [ "${COUNT_LOOP_THREAD:-}" = yes ]; then echo "$loop $total"; else echo "$total"; fi
}
# Calls go as the Swift SDK sends them: a 30 s deadline on each (loadgen's default), the token on
# a connection's first call, and an idempotency key on each write (--idempotency-keys).
homed_count() {  # calls connections depth method [request-hex [loadgen flags...]]
    count "$(pgrep -f "homed-stripped --port $HOMED_PORT" | head -1)" "$WORK/homed.callgrind" "$1" \
        --endpoint "127.0.0.1:$HOMED_PORT" --token-file "$WORK/homed-owner.token" --connections "$2" --depth "$3" \
        --method "$4" --request-hex "${5:-}" "${@:6}"
}
# gRPC calls to homed's door, from cload (grpc-swift and grpcio send the same: the token on every
# call, no deadline): a warm-up, then SECONDS of calls, counted by cload.
grpc_count() {  # seconds connections depth method request-hex
    local pid calls
    pid=$(pgrep -f "homed-stripped --port $HOMED_PORT" | head -1)
    "$CLOAD" grpc 127.0.0.1 "$GRPC_PORT" "$2" "$3" 2 0 "$4" "$5" "$WORK/homed-owner.token" >/dev/null
    callgrind_control -z "$pid" >/dev/null
    calls=$("$CLOAD" --count grpc 127.0.0.1 "$GRPC_PORT" "$2" "$3" "$1" 0 "$4" "$5" "$WORK/homed-owner.token")
    callgrind_control -d "$pid" >/dev/null
    per_call "$WORK/homed.callgrind" "$calls"
}
redis_count() {  # calls connections depth
    count "$(pgrep -f "redis-server.*:$REDIS_PORT" | head -1)" "$WORK/redis.callgrind" "$1" \
        --target redis --redis-command GET --endpoint "127.0.0.1:$REDIS_PORT" --connections "$2" --depth "$3"
}

declare -A measured
measured[health-1x1]=$(homed_count "$CALLS_1X1" 1 1 home.v1.Health/Check)
measured[health-50x16]=$(homed_count "$CALLS_50X16" 50 16 home.v1.Health/Check)
measured[read-1x1]=$(homed_count "$CALLS_1X1" 1 1 home.v1.HomeService/ReadCharacteristic "$READ_HEX")
measured[read-50x16]=$(homed_count "$CALLS_50X16" 50 16 home.v1.HomeService/ReadCharacteristic "$READ_HEX")
# A write of signed_value 50 (field 3: value { signed_value (field 2) }), forwarded to the simulator.
read -r measured[write-loop-50x16] write_total < <(
    COUNT_LOOP_THREAD=yes SETTLE_SECONDS=3 homed_count "$WRITES_50X16" 50 16 home.v1.HomeService/WriteCharacteristic "${READ_HEX}1a021032" --idempotency-keys
)
measured[write-total-50x16]=$write_total
# A durable write through the store without the accessory: an action's target value (the checks,
# the action set's row, an event, its share of a group commit).
STORE_WRITE_HEX=$(bench_scene "$BIN" "127.0.0.1:$HOMED_PORT" "$WORK/homed-owner.token" "$READ_HEX")
read -r measured[store-write-loop-50x16] store_write_total < <(
    COUNT_LOOP_THREAD=yes homed_count "$WRITES_50X16" 50 16 home.v1.HomeService/UpdateActionTargetValue "$STORE_WRITE_HEX" --idempotency-keys
)
measured[store-write-total-50x16]=$store_write_total
# The same two writes one at a time (1 × 1): each is a commit of its own, so what is paid once a
# commit (the hand-off to the writer, SQLite's transaction, the commit's completion) shows whole.
read -r measured[write-loop-1x1] measured[write-total-1x1] < <(
    COUNT_LOOP_THREAD=yes SETTLE_SECONDS=3 homed_count "$WRITES_1X1" 1 1 home.v1.HomeService/WriteCharacteristic "${READ_HEX}1a021032" --idempotency-keys
)
read -r measured[store-write-loop-1x1] measured[store-write-total-1x1] < <(
    COUNT_LOOP_THREAD=yes homed_count "$WRITES_1X1" 1 1 home.v1.HomeService/UpdateActionTargetValue "$STORE_WRITE_HEX" --idempotency-keys
)
# One unary call through the gRPC door (HTTP/2 through nghttp2, HPACK, the length prefix, trailers).
measured[grpc-health-1x1]=$(grpc_count "$GRPC_SECONDS" 1 1 home.v1.Health/Check 0a00)
measured[grpc-read-50x16]=$(grpc_count "$GRPC_SECONDS" 50 16 home.v1.HomeService/ReadCharacteristic "$READ_HEX")

if $CHECK; then
    status=0
    while read -r name budget _; do
        case "$name" in ''|'#'*) continue ;; esac
        value=${measured[$name]:-}
        if [ -z "$value" ]; then echo "no measurement named $name" >&2; status=1; continue; fi
        if [ "$value" -gt "$budget" ]; then
            echo "instruction budget exceeded: $name $value per call > $budget" >&2
            status=1
        else
            echo "$name: $value instructions per call (budget $budget)"
        fi
    done <bench/instruction-budget.txt
    for name in "${!measured[@]}"; do
        grep -q "^$name " bench/instruction-budget.txt || echo "$name: ${measured[$name]} instructions per call (no budget)"
    done
    exit $status
fi

redis_1x1=$(redis_count "$CALLS_1X1" 1 1)
redis_50x16=$(redis_count "$CALLS_50X16" 50 16)
echo "| calls | homed Health/Check | homed ReadCharacteristic | redis GET | Check / GET | Read / Check |"
echo "|---|---:|---:|---:|---:|---:|"
echo "| 1 × 1 | ${measured[health-1x1]} | ${measured[read-1x1]} | $redis_1x1 | $(ratio "${measured[health-1x1]}" "$redis_1x1") | $(ratio "${measured[read-1x1]}" "${measured[health-1x1]}") |"
echo "| 50 × 16 | ${measured[health-50x16]} | ${measured[read-50x16]} | $redis_50x16 | $(ratio "${measured[health-50x16]}" "$redis_50x16") | $(ratio "${measured[read-50x16]}" "${measured[health-50x16]}") |"
echo
echo "Durable WriteCharacteristic at 50 × 16, forwarded to a simulated accessory: ${measured[write-loop-50x16]}" \
    "instructions per write on the event-loop thread, $write_total on every thread."
echo "Durable UpdateActionTargetValue at 50 × 16 (the store's write without an accessory):" \
    "${measured[store-write-loop-50x16]} on the event-loop thread, $store_write_total on every thread."
echo "At 1 × 1 (a commit each): WriteCharacteristic ${measured[write-loop-1x1]} on the event-loop thread," \
    "${measured[write-total-1x1]} on every thread; UpdateActionTargetValue ${measured[store-write-loop-1x1]}" \
    "and ${measured[store-write-total-1x1]}."
echo "Through the gRPC door (cload, HTTP/2): Health/Check at 1 × 1 ${measured[grpc-health-1x1]}," \
    "cached ReadCharacteristic at 50 × 16 ${measured[grpc-read-50x16]} instructions per call on every thread."
