# Sourced by the bench scripts: pairs a simulated accessory into a home through the real path.
#
# pair_accessory BIN ENDPOINT TOKEN_FILE HOME_NAME WORK_DIR DESCRIPTION_JSON
#   Starts `rpc-client accessory simulate` with the description (protobuf JSON) in the background
#   (it accepts every write), on CPU 1 with the load clients (SIMULATOR_CPU to change it; the
#   servers have CPU 0), adds it to the home, and prints the AddAccessory answer as JSON. Its pid
#   goes to WORK_DIR/simulator.pid: callers run this in a command substitution, a subshell, where a
#   variable would not reach them. Stop it with stop_simulator: it retries a server that went away,
#   so it never ends by itself.
pair_accessory() {
    local bin=$1 endpoint=$2 token=$3 home=$4 work=$5 description=$6 code=284-91-735
    printf '%s' "$description" >"$work/accessory.json"
    taskset -c "${SIMULATOR_CPU:-1}" "$bin/rpc-client" accessory simulate --endpoint "$endpoint" --description-json "$work/accessory.json" \
        --setup-code "$code" --state "$work/simulator.json" --quiet >"$work/simulator.log" 2>&1 &
    echo $! >"$work/simulator.pid"
    for _ in $(seq 200); do grep -q advertising "$work/simulator.log" && break; sleep 0.1; done
    local id
    id=$(sed -nE 's/^advertising ".*" ([0-9A-F-]+) with setup code.*/\1/p' "$work/simulator.log")
    "$bin/rpc-client" accessory add --endpoint "$endpoint" --token-file "$token" --home "$home" \
        --setup-code "$code" --json "$id"
}

# stop_simulator WORK_DIR: stops the simulator pair_accessory started there, if any, and waits for
# it to end (it is not this shell's child, so `wait` cannot).
stop_simulator() {
    [ -f "$1/simulator.pid" ] || return 0
    local pid
    pid=$(cat "$1/simulator.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
}
