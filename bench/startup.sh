#!/usr/bin/env bash
# homed's start-up time and memory on a store of 100,000 accessories (500,000 characteristics),
# built once by bench/core (`core-bench build`). Two states of the same store are measured, each
# RUNS times on a fresh copy:
#   reachable:   as built, every accessory reachable, so the start marks 100,000 of them unreachable
#                (an event and a row update each), as after a server that stopped with all of them
#                connected;
#   unreachable: the store after such a start (the steady state: nothing to reset).
# "ready" is from launching homed to its first answered health check (rpc-client's own start-up,
# about 20 ms, included); RSS is read 3 s later.
#
#   bench/startup.sh            # from the repository root; prints a Markdown table
#   SOURCE=api bench/startup.sh # the store built through the API instead, as clients build one:
#                               # 100 homes of bridges of 100 accessories, paired by `loadgen fleet`
#                               # (one characteristic each beside the bridge's), homed killed with
#                               # the fleet still attached (so every accessory is reachable)
# Environment: ACCESSORIES (default 100000), RUNS (default 3), STORE_DIR (default a folder under
# bench/core/.build, reused between runs so the 10 s build happens once), HOMED (default the release
# build's homed: another binary, to compare two builds on the same stores).
set -euo pipefail
cd "$(dirname "$0")/.."
ACCESSORIES="${ACCESSORIES:-100000}"
SOURCE="${SOURCE:-core}"
RUNS="${RUNS:-3}"
STORE_DIR="${STORE_DIR:-$PWD/bench/core/.build/startup-stores}"
PORT=7436

scripts/install-packages.sh
command -v bc >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bc >/dev/null
command -v sqlite3 >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sqlite3 >/dev/null
scripts/build-release.sh --product homed >&2
scripts/build-release.sh --product rpc-client >&2
[ "$SOURCE" = api ] && scripts/build-release.sh --product loadgen >&2
BIN="$(swift build -c release --show-bin-path)"
HOMED="${HOMED:-$BIN/homed}"
[ "$SOURCE" = api ] || (cd bench/core && swift build -c release >&2)
mkdir -p "$STORE_DIR"
WORK="$(mktemp -d)"
cleanup() {
    kill "${HOMED_PID:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

reachable="$STORE_DIR/reachable-$SOURCE-$ACCESSORIES.sqlite"
unreachable="$STORE_DIR/unreachable-$SOURCE-$ACCESSORIES.sqlite"
# build_through_api FILE: pairs ACCESSORIES accessories into 100 homes, bridges of 100, through a
# homed of its own, and kills it (-9) with every accessory attached.
build_through_api() {
    local dir="$WORK/build" homes=100
    mkdir -p "$dir"
    # Shared: this script reads the file beside the server to see when the fleet is in.
    # Each home holds its share and a bridge per 100 (above the default 10,000 a home at 1,000,000).
    (cd "$dir" && exec "$HOMED" --port "$PORT" --store store.sqlite --shared-store --log-level warning \
        --max-accessories-per-home $((ACCESSORIES / homes * 101 / 100 + 1)) 2>homed.err) &
    HOMED_PID=$!
    until "$BIN/rpc-client" health --endpoint "127.0.0.1:$PORT" >/dev/null 2>&1; do sleep 0.1; done
    "$BIN/loadgen" fleet --endpoint "127.0.0.1:$PORT" --token-file "$dir/homed-owner.token" --homes "$homes" \
        --accessories $((ACCESSORIES / homes)) --bridged 100 --controllers 1 --report-rate 1 --read-rate 1 \
        --write-rate 1 --execute-rate 0 --warmup 0 --duration 5 --state "$dir/fleet.json" --no-progress >/dev/null &
    local fleet=$!
    # Once every accessory is paired and attached (the fleet measures for 5 s after that), stop homed
    # the hard way, as a crash would, with all of them connected.
    until [ "$(sqlite3 "$dir/store.sqlite" "SELECT count(*) FROM accessory" 2>/dev/null || echo 0)" -ge "$ACCESSORIES" ]; do
        kill -0 "$fleet" 2>/dev/null || { echo "loadgen fleet ended before pairing every accessory" >&2; exit 1; }
        sleep 1
    done
    sleep 3
    kill -9 "$HOMED_PID"; wait "$HOMED_PID" 2>/dev/null || true
    HOMED_PID=""
    kill "$fleet" 2>/dev/null; wait "$fleet" 2>/dev/null || true
    sqlite3 "$dir/store.sqlite" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
    cp "$dir/store.sqlite" "$1"
}
if [ ! -f "$reachable" ]; then
    if [ "$SOURCE" = api ]; then
        build_through_api "$reachable"
    else
        bench/core/.build/release/core-bench build "$reachable" --accessories "$ACCESSORIES" >&2
    fi
fi

# start STORE-FILE [keep-as]: prints "seconds rss-MB peak-MB"; with keep-as, the store after the
# start (its reset committed, homed stopped with SIGTERM) is copied there.
start() {
    rm -rf "$WORK/run" && mkdir "$WORK/run"
    cp "$1" "$WORK/run/store.sqlite"
    local begin end
    begin=$(date +%s.%N)
    (cd "$WORK/run" && exec "$HOMED" --port "$PORT" --store store.sqlite --log-level warning 2>homed.err) &
    HOMED_PID=$!
    # Waits for the port with bash's /dev/tcp (a process started every few milliseconds would take
    # CPU from the load it measures), then for the first answered health check.
    until (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do sleep 0.01; done
    until "$BIN/rpc-client" health --endpoint "127.0.0.1:$PORT" >/dev/null 2>&1; do sleep 0.01; done
    end=$(date +%s.%N)
    sleep 3
    local rss peak
    rss=$(awk '/VmRSS/ { print int($2 / 1024) }' "/proc/$HOMED_PID/status")
    peak=$(awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$HOMED_PID/status")
    kill -TERM "$HOMED_PID" && wait "$HOMED_PID" 2>/dev/null || true
    HOMED_PID=""
    if [ -n "${2:-}" ]; then cp "$WORK/run/store.sqlite" "$2"; fi
    echo "$(echo "$end - $begin" | bc) $rss $peak"
}

[ -f "$unreachable" ] || start "$reachable" "$unreachable" >/dev/null
echo "| store | ready (s) | RSS after 3 s (MB) | peak RSS (MB) |"
echo "|---|---|---|---|"
for state in reachable unreachable; do
    file="$STORE_DIR/$state-$SOURCE-$ACCESSORIES.sqlite"
    results=()
    for _ in $(seq "$RUNS"); do results+=("$(start "$file")"); done
    column() { printf '%s\n' "${results[@]}" | awk -v f="$1" '{ printf "%s%s", (NR > 1 ? ", " : ""), (f == 1 ? sprintf("%.2f", $f) : $f) }'; }
    echo "| $state | $(column 1) | $(column 2) | $(column 3) |"
done
