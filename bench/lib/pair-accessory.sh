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

# bench_lamp BIN ENDPOINT TOKEN_FILE WORK_DIR
#   Adds a home "Bench" and pairs a simulated lamp into it (On, and Brightness at 50), then prints
#   the hex bytes of a ReadCharacteristic request for its Brightness: home_id (field 1) and
#   characteristic_id (field 2), 16 bytes each. A write's request is the same followed by
#   value (field 3) = { signed_value (field 2): 50 }: append 1a021032. Stop the lamp with
#   stop_simulator WORK_DIR.
bench_lamp() {
    local bin=$1 endpoint=$2 token=$3 work=$4 home accessory
    home=$("$bin/rpc-client" home add Bench --endpoint "$endpoint" --token-file "$token" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    accessory=$(
        pair_accessory "$bin" "$endpoint" "$token" Bench "$work" "{\"name\": \"Lamp\",
            \"services\": [{\"type\": \"00000043-0000-1000-8000-0026BB765291\", \"characteristics\": [
            {\"type\": \"00000025-0000-1000-8000-0026BB765291\"},
            {\"type\": \"00000008-0000-1000-8000-0026BB765291\", \"value\": {\"signedValue\": \"50\"}}]}]}"
    )
    python3 - "$home" "$accessory" <<'PY'
import base64, json, sys
home = base64.b64decode(sys.argv[1])
accessory = json.loads(sys.argv[2])["accessories"][0]
brightness = next(c for c in accessory["services"][0]["characteristics"] if c["type"].startswith("00000008"))
print((b"\x0a\x10" + home + b"\x12\x10" + base64.b64decode(brightness["id"])).hex())
PY
}

# bench_scene BIN ENDPOINT TOKEN_FILE READ_HEX
#   Adds an action set "Scene" to the home "Bench" that writes 50 to the characteristic of READ_HEX
#   (bench_lamp's request), and prints the hex bytes of an UpdateActionTargetValue request for that
#   action: home_id (1), action_set_id (2), action_id (3), target_value (4) = { signed_value (2): 50 }.
#   A durable write through the store with no accessory in the way.
bench_scene() {
    local bin=$1 endpoint=$2 token=$3 read=$4 scene
    "$bin/rpc-client" action-set add --home Bench Scene --endpoint "$endpoint" --token-file "$token" >/dev/null
    scene=$("$bin/rpc-client" action-set add-action --home Bench Scene \
        "$(python3 -c 'import sys, uuid; print(uuid.UUID(hex=sys.argv[1][-32:]))' "$read")" 50 \
        --endpoint "$endpoint" --token-file "$token" --json)
    python3 - "$read" "$scene" <<'PY'
import base64, json, sys
scene = json.loads(sys.argv[2])
set_id, action_id = (base64.b64decode(x).hex() for x in (scene["id"], scene["actions"][0]["id"]))
print(sys.argv[1][:36] + "1210" + set_id + "1a10" + action_id + "22021032")
PY
}

# lean_accessory HOST PORT WORK_DIR [EXTRA-CREDIT]
#   Replaces the simulator that pair_accessory (or bench_lamp) paired in WORK_DIR with
#   `cload accessory` (bench/cload: build_cload first), attached with the same accessory id and
#   credential, on the same CPU: it answers every command at once with success, at a small fraction
#   of the Swift simulator's cost per command, so that a forwarded write's rate is the server's and
#   not the accessory's (the simulator took 8.5 us of CPU per write at 1 x 16, the shared core of
#   the load client). EXTRA-CREDIT: the link's window beyond the protocol's 64 messages (default
#   none). stop_simulator WORK_DIR stops it.
lean_accessory() {
    local host=$1 port=$2 work=$3 extra=${4:-} attach
    # The simulator saves its credential once the pairing reaches it, just after AddAccessory answers.
    for _ in $(seq 100); do grep -q '"credential"' "$work/simulator.json" 2>/dev/null && break; sleep 0.05; done
    stop_simulator "$work"
    attach=$(python3 - "$work/simulator.json" <<'PY'
import base64, json, sys
state = json.load(open(sys.argv[1]))
accessory = base64.b64decode(json.loads(state["descriptionJSON"])["id"])
credential = state["credential"].encode()
print((b"\x0a\x10" + accessory + b"\x12" + bytes([len(credential)]) + credential).hex())
PY
    )
    taskset -c "${SIMULATOR_CPU:-1}" "$CLOAD" accessory "$host" "$port" "$attach" $extra >"$work/accessory.log" 2>&1 &
    echo $! >"$work/simulator.pid"
    for _ in $(seq 100); do grep -q attached "$work/accessory.log" && return 0; sleep 0.05; done
    echo "cload accessory did not attach: $(cat "$work/accessory.log")" >&2
    return 1
}
