#!/usr/bin/env bash
# homed over TLS against Redis over TLS (redis-server --tls-port), side by side in one run, on
# loopback, one client for both: a cached read (home.v1.HomeService/ReadCharacteristic, with the
# SDK's deadline and token) against GET at 1 and 50 connections, depth 1 and 16, from cload
# (bench/cload: one C code path and one OpenSSL session per connection for both protocols, cheap
# enough that the servers saturate first), then from loadgen (Swift, its TLS through our own
# memory-BIO sessions); new TLS connections per second, each making one call (the read with its
# token, against GET; loadgen connect); and the memory an idle TLS connection costs each server at
# 10,000 connections (bench/idle-tls-connections.py).
# Servers on CPU 0, the client on CPU 1; runs alternate, homed then Redis, PAIRS times (default 5).
# Both servers use the same P-256 certificate (scripts/make-test-certificates.sh) and OpenSSL 3.
# Run from the repository root:  bench/tls-vs-redis.sh > /tmp/tls.md
#
# Environment: SECONDS_PER_RUN (default 4), PAIRS (default 5), IDLE_CONNECTIONS (default 10000).
set -euo pipefail
. "$(dirname "$0")/lib/pair-accessory.sh"
. "$(dirname "$0")/lib/rates.sh"
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${SECONDS_PER_RUN:-4}"
PAIRS="${PAIRS:-5}"
IDLE_CONNECTIONS="${IDLE_CONNECTIONS:-10000}"
HOMED_PORT=7434
REDIS_PORT=6394

scripts/install-packages.sh
command -v redis-server >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
for product in homed rpc-client loadgen; do scripts/build-release.sh --product "$product" >&2; done
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
scripts/make-test-certificates.sh "$WORK/certs" >/dev/null
CERTS="$WORK/certs"
ulimit -n "$(ulimit -Hn)"

# homed: TLS on TCP; its Unix socket (plain, local) sets the bench home up.
(cd "$WORK" && exec taskset -c 0 "$BIN/homed" --port "$HOMED_PORT" --unix-socket "$WORK/homed.sock" \
    --log-level warning --max-connections 15000 --tls-cert "$CERTS/server.pem" --tls-key "$CERTS/server.key") &
HOMED_PID=$!
mkdir -p "$WORK/redis"
taskset -c 0 redis-server --port 0 --tls-port "$REDIS_PORT" --tls-cert-file "$CERTS/server.pem" \
    --tls-key-file "$CERTS/server.key" --tls-ca-cert-file "$CERTS/ca.pem" --tls-auth-clients no \
    --dir "$WORK/redis" --save "" --appendonly no --maxclients 15000 --daemonize no --loglevel warning >/dev/null &
REDIS_PID=$!
for _ in $(seq 100); do [ -S "$WORK/homed.sock" ] && [ -s "$WORK/homed-owner.token" ] && break; sleep 0.1; done
READ_HEX=$(bench_lamp "$BIN" "unix:$WORK/homed.sock" "$WORK/homed-owner.token" "$WORK")
TLS=(--ca-file "$CERTS/ca.pem")

# One loadgen run's rate: SUBCOMMAND FIELD ARGUMENTS...
run_rate() {
    local out
    out=$(taskset -c 1 "$BIN/loadgen" "$1" "${@:3}" "${TLS[@]}" --duration "$SECONDS_PER_RUN" --warmup 1 --json)
    grep -q '"errors": 0,' <<<"$out" || { echo "loadgen reported errors: $out" >&2; exit 1; }
    sed -E "s/.*\"$2\": ([0-9]+).*/\\1/" <<<"$out"
}

echo "| workload | client | shape | homed median | redis median | ratio of medians | ratio of sums | pair ratios | pairs ≥ 1 |"
echo "|---|---|---|---:|---:|---:|---:|---|---:|"
for shape in "1 1" "1 16" "50 1" "50 16"; do
    read -r connections depth <<<"$shape"
    CLOAD_FLAGS="--tls $CERTS/ca.pem" cload_pairs_of "$connections" "$depth" \
        "hrpc $HOMED_PORT home.v1.HomeService/ReadCharacteristic $READ_HEX $WORK/homed-owner.token" \
        "redis $REDIS_PORT GET key:__rand_int__" | {
        read -r h r medians sums low high up
        echo "| cached read over TLS vs GET over TLS (calls/s) | cload | $connections × $depth | $h | $r | $medians | $sums | $low–$high | $up |"
    }
done
for shape in "1 1" "1 16" "50 1" "50 16"; do
    read -r connections depth <<<"$shape"
    for _ in $(seq "$PAIRS"); do
        ours=$(run_rate unary calls_per_second --endpoint "127.0.0.1:$HOMED_PORT" --token-file "$WORK/homed-owner.token" \
            --method home.v1.HomeService/ReadCharacteristic --request-hex "$READ_HEX" \
            --connections "$connections" --depth "$depth")
        theirs=$(run_rate unary calls_per_second --target redis --redis-command GET --endpoint "127.0.0.1:$REDIS_PORT" \
            --connections "$connections" --depth "$depth")
        echo "$ours $theirs"
    done | pair_summary | {
        read -r h r medians sums low high up
        echo "| cached read over TLS vs GET over TLS (calls/s) | loadgen | $connections × $depth | $h | $r | $medians | $sums | $low–$high | $up |"
    }
done
for _ in $(seq "$PAIRS"); do
    ours=$(run_rate connect connections_per_second --endpoint "127.0.0.1:$HOMED_PORT" \
        --token-file "$WORK/homed-owner.token" --method home.v1.HomeService/ReadCharacteristic \
        --request-hex "$READ_HEX" --concurrency 16)
    theirs=$(run_rate connect connections_per_second --target redis --endpoint "127.0.0.1:$REDIS_PORT" --concurrency 16)
    echo "$ours $theirs"
done | pair_summary | {
    read -r h r medians sums low high up
    echo "| new TLS connections/s, one call each | loadgen connect | 16 at once | $h | $r | $medians | $sums | $low–$high | $up |"
}

echo
echo "| server | idle TLS connections | resident memory before | after | per connection |"
echo "|---|---:|---:|---:|---:|"
python3 bench/idle-tls-connections.py homed "$HOMED_PORT" "$HOMED_PID" "$IDLE_CONNECTIONS" "$CERTS/ca.pem"
python3 bench/idle-tls-connections.py redis "$REDIS_PORT" "$REDIS_PID" "$IDLE_CONNECTIONS" "$CERTS/ca.pem"
