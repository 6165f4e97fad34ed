#!/usr/bin/env bash
# The accessory fleet through repeated crashes of homed: a release homed on a fresh store, a first
# `loadgen fleet` run that pairs the accessories, then one run of KILLS × (INTERVAL + 2) + INTERVAL
# seconds during which homed is killed with SIGKILL every INTERVAL seconds (plus the time each
# restart takes to answer) and started again at once on the same store. The fleet comes back by
# itself each time (accessories attach again, controllers reconnect, subscribers resume from their
# last revision). Prints the fleet's figures and fails
# unless every acknowledged report reached its home's subscriber, no event came twice or out of
# order, and every link that ended came back.
#
#   bench/fleet-restarts.sh     # from the repository root
# Environment: PRESET (default 10k-accessories), KILLS (default 5), INTERVAL (seconds, default 8),
# PORT (default 7437), BRIDGED (accessories per bridge, default 0: each on its own connection).
set -euo pipefail
cd "$(dirname "$0")/.."
PRESET="${PRESET:-10k-accessories}"
KILLS="${KILLS:-5}"
INTERVAL="${INTERVAL:-8}"
PORT="${PORT:-7437}"
BRIDGED="${BRIDGED:-0}"

scripts/install-packages.sh
scripts/build-release.sh --product homed >&2
scripts/build-release.sh --product loadgen >&2
BIN="$(swift build -c release --show-bin-path)"
WORK="$(mktemp -d)"
cleanup() {
    kill -9 "$(cat "$WORK/homed.pid" 2>/dev/null)" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

start_homed() {
    "$BIN/homed" --port "$PORT" --store "$WORK/homed.sqlite" --owner-token-file "$WORK/owner.token" \
        --log-level warning --stall-warning-ms 50 >>"$WORK/homed.log" 2>&1 &
    echo $! >"$WORK/homed.pid"
    until (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do sleep 0.05; done
}

fleet() {
    "$BIN/loadgen" fleet --endpoint "127.0.0.1:$PORT" --token-file "$WORK/owner.token" --preset "$PRESET" \
        --bridged "$BRIDGED" --state "$WORK/fleet.json" --no-progress "$@"
}

start_homed
fleet --duration 2 >/dev/null
echo "paired; $KILLS kills, every $INTERVAL s" >&2
# Each restart takes up to a couple of seconds before the next interval starts: room for them, so the
# last kill still falls inside the run.
fleet --duration $((KILLS * (INTERVAL + 2) + INTERVAL)) --json >"$WORK/report.json" &
FLEET_PID=$!
for kill in $(seq 1 "$KILLS"); do
    sleep "$INTERVAL"
    rss_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$(cat "$WORK/homed.pid")/status")
    store_kb=$(du -k -c "$WORK"/homed.sqlite* | tail -1 | cut -f1)
    echo "before kill $kill: homed RSS $((rss_kb / 1024)) MB, store $((store_kb / 1024)) MB" >&2
    kill -9 "$(cat "$WORK/homed.pid")"
    wait "$(cat "$WORK/homed.pid")" 2>/dev/null || true
    started=$(date +%s%N)
    start_homed
    echo "kill $kill: homed answering again after $((($(date +%s%N) - started) / 1000000)) ms" >&2
done
wait "$FLEET_PID"
grep -c "event loop stalled" "$WORK/homed.log" | sed 's/^/homed loop stalls of 50 ms or more: /' >&2 || true

python3 - "$WORK/report.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{r['accessories']} accessories, {r['seconds']} s measured")
for kind in ["report", "read", "write", "execute", "notification"]:
    k = r[kind]
    print(f"  {kind:12} {k['completed']:>9} completed {k['errors']:>7} errors  p50 {k['p50_us']} µs  p99 {k['p99_us']} µs")
for key in ["reports_acknowledged", "report_events", "skipped_updates", "coalesced_reports", "reports_without_event", "repeated_events",
            "link_failures", "relinks", "links_lost", "links_down", "longest_link_outage_ms",
            "controller_reconnects", "subscription_ends", "resumed_subscriptions", "resyncs"]:
    print(f"  {key}: {r[key]}")
for report in r["missing_reports"]: print(f"  missing: {report}")
failures = []
if r["reports_without_event"] != 0: failures.append("an acknowledged report never reached its subscriber")
if r["repeated_events"] != 0: failures.append("an event came twice or out of order")
if r["relinks"] != r["link_failures"] or r["links_down"] != 0: failures.append("a link did not come back")
for failure in failures: print("FAILED: " + failure)
sys.exit(1 if failures else 0)
EOF
