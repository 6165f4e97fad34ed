#!/usr/bin/env bash
# homed against what users would pick instead: the same home store behind grpc-swift-2
# (bench/grpc: SwiftNIO's HTTP/2 transport, one event-loop thread), side by side on loopback in
# alternating pairs, with one client for both (cload: our protocol, and gRPC over HTTP/2 through
# libnghttp2, with one loop). Three calls with the same request shape on both servers: the health
# check (the protocol and runtime alone), a cached ReadCharacteristic (the same store call behind
# both: membership, readable, blocked, the cache) and a durable write, UpdateActionTargetValue (the
# same store calls, answered once the group commit is fsynced: no accessory in the way, unlike
# WriteCharacteristic); 1 and 50 connections, depth 1 and 16. Both
# servers are pinned to CPU 0 with all their threads (homed: its loop and the store's writer; the
# gRPC server: NIO's loop and Swift's executor threads), the client and homed's lamp to CPU 1.
# Prints bench/RESULTS.md's table; run from the repository root:  bench/grpc-vs-homed.sh > /tmp/grpc.md
#
# Environment: PAIRS (default 6) of SECONDS_PER_RUN (default 4). The first build of bench/grpc
# takes about 7 minutes (gRPC, NIO, HTTP/2 and TLS from the package mirror).
set -euo pipefail
. "$(dirname "$0")/lib/pair-accessory.sh"
. "$(dirname "$0")/lib/rates.sh"
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${SECONDS_PER_RUN:-4}"
PAIRS="${PAIRS:-6}"
HOMED_PORT=7433
GRPC_PORT=7434

scripts/install-packages.sh
for product in homed rpc-client; do scripts/build-release.sh --product "$product" >&2; done
BIN="$(swift build -c release --show-bin-path)"
swift build -c release --package-path bench/grpc >&2
GRPC_BIN="$(swift build -c release --package-path bench/grpc --show-bin-path)"
build_cload
WORK="$(mktemp -d)"

cleanup() {
    stop_simulator "$WORK/homed"
    kill "${HOMED_PID:-}" "${GRPC_PID:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir "$WORK/homed" "$WORK/grpc"
(cd "$WORK/homed" && exec taskset -c 0 "$BIN/homed" --port "$HOMED_PORT" --log-level warning --max-connections 1000) &
HOMED_PID=$!
taskset -c 0 "$GRPC_BIN/homed-grpc" "$GRPC_PORT" "$WORK/grpc" >"$WORK/grpc/ready" &
GRPC_PID=$!
for _ in $(seq 100); do
    "$BIN/rpc-client" health --endpoint "127.0.0.1:$HOMED_PORT" >/dev/null 2>&1 && [ -s "$WORK/grpc/ready" ] && break
    sleep 0.1
done
HOMED_READ=$(bench_lamp "$BIN" "127.0.0.1:$HOMED_PORT" "$WORK/homed/homed-owner.token" "$WORK/homed")
HOMED_WRITE=$(bench_scene "$BIN" "127.0.0.1:$HOMED_PORT" "$WORK/homed/homed-owner.token" "$HOMED_READ")
read -r _ home characteristic set action <"$WORK/grpc/ready"
GRPC_READ="0a10${home}1210${characteristic}"
GRPC_WRITE="0a10${home}1210${set}1a10${action}22021032"
# An explicitly empty service name (field 1, length 0): the health request with one byte string for
# both, which cload needs before the token file.
HEALTH=0a00

echo "| call | shape | homed median calls/s | gRPC median calls/s | ratio of medians | ratio of sums | pair ratios | pairs ≥ 1 |"
echo "|---|---|---:|---:|---:|---:|---|---:|"
for call in health read write; do
    case $call in
        health) name="health check" ours="home.v1.Health/Check $HEALTH" theirs="home.v1.Health/Check $HEALTH" ;;
        read)
            name="cached read" ours="home.v1.HomeService/ReadCharacteristic $HOMED_READ"
            theirs="home.v1.HomeService/ReadCharacteristic $GRPC_READ"
            ;;
        write)
            name="durable write" ours="home.v1.HomeService/UpdateActionTargetValue $HOMED_WRITE"
            theirs="home.v1.HomeService/UpdateActionTargetValue $GRPC_WRITE"
            ;;
    esac
    for shape in "1 1" "1 16" "50 1" "50 16"; do
        read -r connections depth <<<"$shape"
        read -r a b medians sums low high up < <(
            cload_pairs_of "$connections" "$depth" "hrpc $HOMED_PORT $ours $WORK/homed/homed-owner.token" \
                "grpc $GRPC_PORT $theirs $WORK/grpc/owner.token"
        )
        echo "| $name | $connections × $depth | $a | $b | $medians | $sums | $low–$high | $up |"
    done
done
