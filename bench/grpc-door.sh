#!/usr/bin/env bash
# homed's gRPC door (homed --grpc-port) against gRPC servers users know, and against homed's own
# protocol, side by side on loopback in alternating pairs with one client for every server (cload's
# gRPC over HTTP/2 through libnghttp2, and our protocol, with one loop): the same unary method,
# home.v1.Health/Check (the protocol and runtime alone), at 1 and 50 connections, depth 1 and 16.
#   - gRPC C++ (Debian's libgrpc++, one completion queue polled by one thread: bench/grpc-cpp)
#   - grpc-swift-2 on SwiftNIO (bench/grpc, one event-loop thread)
#   - homed's own protocol, on the same homed
# Every server is pinned to CPU 0 with all its threads, the client to CPU 1. Then nghttp2's own
# cost per unary call, with no network and no application (bench/nghttp2-floor): the floor under
# the door, to hold against our protocol's whole call.
# Prints bench/RESULTS.md's table; run from the repository root:  bench/grpc-door.sh > /tmp/door.md
#
# Environment: PAIRS (default 6) of SECONDS_PER_RUN (default 4). The first build of bench/grpc
# takes about 7 minutes (gRPC, NIO, HTTP/2 and TLS from the package mirror).
set -euo pipefail
. "$(dirname "$0")/lib/rates.sh"
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${SECONDS_PER_RUN:-4}"
PAIRS="${PAIRS:-6}"
HOMED_PORT=7435
DOOR_PORT=7436
CPP_PORT=7437
SWIFT_PORT=7438

scripts/install-packages.sh
for package in libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev g++; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package" >/dev/null
done
for product in homed rpc-client; do scripts/build-release.sh --product "$product" >&2; done
BIN="$(swift build -c release --show-bin-path)"
make -s -C bench/grpc-cpp >&2
swift build -c release --package-path bench/grpc >&2
GRPC_BIN="$(swift build -c release --package-path bench/grpc --show-bin-path)"
build_cload
WORK="$(mktemp -d)"

cleanup() {
    kill "${HOMED_PID:-}" "${CPP_PID:-}" "${SWIFT_PID:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir "$WORK/homed" "$WORK/swift"
(cd "$WORK/homed" && exec taskset -c 0 "$BIN/homed" --port "$HOMED_PORT" --grpc-port "$DOOR_PORT" \
    --log-level warning --max-connections 1000) &
HOMED_PID=$!
taskset -c 0 bench/grpc-cpp/build/health-server "$CPP_PORT" >"$WORK/cpp-ready" &
CPP_PID=$!
taskset -c 0 "$GRPC_BIN/homed-grpc" "$SWIFT_PORT" "$WORK/swift" >"$WORK/swift/ready" &
SWIFT_PID=$!
for _ in $(seq 100); do
    "$BIN/rpc-client" health --endpoint "127.0.0.1:$HOMED_PORT" >/dev/null 2>&1 && [ -s "$WORK/cpp-ready" ] &&
        [ -s "$WORK/swift/ready" ] && break
    sleep 0.1
done
# An explicitly empty service name (field 1, length 0): one request for every server.
CHECK="home.v1.Health/Check 0a00"

echo "| against | shape | homed's gRPC door median calls/s | other median calls/s | ratio of medians | ratio of sums | pair ratios | pairs ≥ 1 |"
echo "|---|---|---:|---:|---:|---:|---|---:|"
for other in cpp swift own; do
    case $other in
        cpp) name="gRPC C++ (1 CQ thread)" theirs="grpc $CPP_PORT $CHECK" ;;
        swift) name="grpc-swift-2" theirs="grpc $SWIFT_PORT $CHECK $WORK/swift/owner.token" ;;
        own) name="homed, own protocol" theirs="hrpc $HOMED_PORT $CHECK $WORK/homed/homed-owner.token" ;;
    esac
    for shape in "1 1" "1 16" "50 1" "50 16"; do
        read -r connections depth <<<"$shape"
        read -r a b medians sums low high up < <(
            cload_pairs_of "$connections" "$depth" "grpc $DOOR_PORT $CHECK" "$theirs"
        )
        echo "| $name | $connections × $depth | $a | $b | $medians | $sums | $low–$high | $up |"
    done
done
gcc -O2 -Wall -Wextra -Werror -o "$WORK/floor" bench/nghttp2-floor/floor.c -lnghttp2
echo
echo "nghttp2 alone, server side, per unary call (bench/nghttp2-floor, 16 calls a batch):" \
    "$(taskset -c 0 "$WORK/floor" 1000000 16) ns; one call a batch: $(taskset -c 0 "$WORK/floor" 300000 1) ns."
