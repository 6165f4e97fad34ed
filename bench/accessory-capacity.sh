#!/usr/bin/env bash
# How many forwarded writes a simulated accessory can answer on one core, against the rate at which
# homed forwards them: the load generator measures the server only while its accessories keep up
# with at least twice the server's rate (issue 11 of the outside findings).
#
# For each shape (1 and 50 connections, depth 1 and 16), cload sends keyed WriteCharacteristic
# calls (the SDK's request shape) for SECONDS_PER_RUN to one accessory, answered in turn by:
#   lean       cload accessory (C, answers at once): the server's own forwarded-write rate
#   simulator  rpc-client accessory simulate (the Swift SDK's SimulatedAccessory)
#   fleet      loadgen fleet's accessory (its loop also runs the fleet's subscriber, which receives
#              each write's change event; no reports, reads or writes of its own)
# homed is on CPU 0, the client and the accessory on CPU 1. The accessory's CPU time (user + system,
# /proc/PID/stat) over the run, divided by the writes answered, is its cost per write; its capacity
# is one core's second over that cost. Run from the repository root:
#   bench/accessory-capacity.sh > /tmp/accessory-capacity.md
#
# Environment: SECONDS_PER_RUN (default 4), SHAPES (default "1x1 1x16 50x1 50x16").
set -euo pipefail
. "$(dirname "$0")/lib/pair-accessory.sh"
. "$(dirname "$0")/lib/rates.sh"
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${SECONDS_PER_RUN:-4}"
HOMED_PORT=7433

scripts/install-packages.sh
for product in homed rpc-client loadgen; do scripts/build-release.sh --product "$product" >&2; done
BIN="$(swift build -c release --show-bin-path)"
build_cload
WORK="$(mktemp -d)"
cleanup() {
    stop_simulator "$WORK"
    kill "${FLEET_PID:-}" "${HOMED_PID:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
(cd "$WORK" && exec taskset -c 0 "$BIN/homed" --port "$HOMED_PORT" --log-level warning --max-connections 1000) &
HOMED_PID=$!
for _ in $(seq 100); do [ -s "$WORK/homed-owner.token" ] && break; sleep 0.1; done
ENDPOINT="127.0.0.1:$HOMED_PORT"
TOKEN="$WORK/homed-owner.token"

# CPU seconds (user + system) the process has used so far.
cpu_seconds() {
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}

# One cload run of keyed writes with no warm-up; prints "calls/s µs-per-write capacity/s" for the
# accessory of PID.
measure() {  # pid request-hex connections depth
    local pid=$1 hex=$2 connections=$3 depth=$4 before after rate
    before=$(cpu_seconds "$pid")
    rate=$(taskset -c 1 "$CLOAD" --keys hrpc 127.0.0.1 "$HOMED_PORT" "$connections" "$depth" "$SECONDS_PER_RUN" 0 \
        home.v1.HomeService/WriteCharacteristic "$hex" "$TOKEN") || { echo "cload failed" >&2; exit 1; }
    after=$(cpu_seconds "$pid")
    awk -v r="$rate" -v b="$before" -v a="$after" -v s="$SECONDS_PER_RUN" \
        'BEGIN { us = (a - b) * 1e6 / (r * s); printf "%d %.1f %d\n", r, us, (us > 0 ? 1e6 / us : 0) }'
}

# The lamp: paired by the simulator, which answers the first rows.
READ_HEX=$(bench_lamp "$BIN" "$ENDPOINT" "$TOKEN" "$WORK")
LAMP_WRITE_HEX=${READ_HEX}1a021032 # value { signed_value: 50 }

# The fleet: one home, one accessory, paired now; its counter takes value { unsigned_value: 50 }.
fleet_run() {  # seconds [options]
    exec taskset -c 1 "$BIN/loadgen" fleet --endpoint "$ENDPOINT" --token-file "$TOKEN" --state "$WORK/fleet.json" \
        --homes 1 --accessories 1 --controllers 1 --report-rate 0 --read-rate 0 --write-rate 0 --execute-rate 0 \
        --warmup 0 --duration "$1" --no-progress "${@:2}"
}
(fleet_run 1 >/dev/null)
FLEET_WRITE_HEX=$(python3 - "$WORK/fleet.json" <<'PY'
import base64, json, sys
state = json.load(open(sys.argv[1]))
home = base64.b64decode(state["homes"][0])
counter = base64.b64decode(state["accessories"][0]["counters"][0]["characteristic"])
print((b"\x0a\x10" + home + b"\x12\x10" + counter + b"\x1a\x02\x18\x32").hex())
PY
)

echo "| shape | homed, lean accessory (calls/s) | simulator: calls/s | µs CPU per write | writes/s on one core | ÷ homed's rate | fleet: calls/s | µs CPU per write | writes/s on one core | ÷ homed's rate |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for shape in ${SHAPES:-1x1 1x16 50x1 50x16}; do
    connections=${shape%x*} depth=${shape#*x}
    # The simulator first (it holds the lamp's link), then the lean accessory in its place.
    echo "$shape: simulator" >&2
    read -r sim_rate sim_us sim_capacity < <(measure "$(cat "$WORK/simulator.pid")" "$LAMP_WRITE_HEX" "$connections" "$depth")
    lean_accessory 127.0.0.1 "$HOMED_PORT" "$WORK"
    echo "$shape: lean" >&2
    read -r lean_rate _ _ < <(measure "$(cat "$WORK/simulator.pid")" "$LAMP_WRITE_HEX" "$connections" "$depth")
    stop_simulator "$WORK"
    # The simulator again, attaching with the credential it kept, for the next shape.
    taskset -c 1 "$BIN/rpc-client" accessory simulate --endpoint "$ENDPOINT" --description-json "$WORK/accessory.json" \
        --setup-code 284-91-735 --state "$WORK/simulator.json" --quiet >"$WORK/simulator.log" 2>&1 &
    echo $! >"$WORK/simulator.pid"
    (fleet_run $((SECONDS_PER_RUN + 30)) >/dev/null) &
    FLEET_PID=$!
    sleep 2 # attached (and the simulator too)
    echo "$shape: fleet" >&2
    read -r fleet_rate fleet_us fleet_capacity < <(measure "$FLEET_PID" "$FLEET_WRITE_HEX" "$connections" "$depth")
    kill "$FLEET_PID" 2>/dev/null || true
    wait "$FLEET_PID" 2>/dev/null || true
    echo "| $connections × $depth | $lean_rate | $sim_rate | $sim_us | $sim_capacity | $(ratio "$sim_capacity" "$lean_rate") | $fleet_rate | $fleet_us | $fleet_capacity | $(ratio "$fleet_capacity" "$lean_rate") |"
done
