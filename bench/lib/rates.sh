# Shared by the throughput scripts: the median of repeated runs, Redis's rate through loadgen's RESP
# mode (the same client as ours) and through redis-benchmark (a second reference), and a ratio.
# Expects BIN, REDIS_PORT, REPEATS and SECONDS_PER_RUN to be set.

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# The calls/s of a loadgen run given the arguments after `loadgen unary`; fails on any error.
loadgen_rate() {
    for _ in $(seq "$REPEATS"); do
        out=$(taskset -c 1 "$BIN/loadgen" unary "$@" --duration "$SECONDS_PER_RUN" --warmup 1 --json)
        if ! grep -q '"errors": 0,' <<<"$out"; then echo "loadgen reported errors: $out" >&2; exit 1; fi
        sed -E 's/.*"calls_per_second": ([0-9]+).*/\1/' <<<"$out"
    done | median
}

loadgen_redis_rate() {  # command connections depth
    loadgen_rate --target redis --redis-command "$1" --endpoint "127.0.0.1:$REDIS_PORT" --connections "$2" --depth "$3"
}

redis_benchmark_rate() {  # test connections depth requests-per-second-guess
    local requests=$(( $4 * SECONDS_PER_RUN ))
    for _ in $(seq "$REPEATS"); do
        taskset -c 1 redis-benchmark -p "$REDIS_PORT" -t "$1" -c "$2" -P "$3" -n "$requests" -q --csv \
            | awk -F'","' '/"(GET|SET)"/ { gsub(/"/, "", $2); print int($2) }'
    done | median
}

# cload (bench/cload/cload.c): a C client that speaks our protocol, RESP and gRPC through one code
# path, so that no server is limited by its client (loadgen spends more per call on our protocol
# than on RESP, and saturates its core first). Built with gcc and libnghttp2 (gRPC's HTTP/2) into
# bench/cload/.build.
build_cload() {
    local package
    for package in gcc libnghttp2-dev libssl-dev; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null
    done
    mkdir -p bench/cload/.build
    gcc -O2 -Wall -Wextra -Werror -o bench/cload/.build/cload bench/cload/cload.c -lnghttp2 -lssl -lcrypto
    CLOAD="$PWD/bench/cload/.build/cload"
}

# One cload run of SECONDS_PER_RUN after a second's warm-up, on CPU 1; prints its calls/s. Our calls
# go as the Swift SDK sends them (cload's default: a 30 s deadline on each); PROTOCOL hrpc-keyed adds
# a fresh idempotency key to each, as the SDK sends with every mutation.
#   cload_once CONNECTIONS DEPTH PROTOCOL PORT ARGUMENTS...  (method request-hex [token-file] | redis arguments)
cload_once() {
    local connections=$1 depth=$2 protocol=$3 port=$4 flags=()
    shift 4
    if [ "$protocol" = hrpc-keyed ]; then protocol=hrpc flags=(--keys); fi
    taskset -c 1 "$CLOAD" "${flags[@]}" ${CLOAD_FLAGS:-} "$protocol" 127.0.0.1 "$port" "$connections" "$depth" "$SECONDS_PER_RUN" 1 "$@" \
        || { echo "cload failed" >&2; exit 1; }
}

cload_rate() {  # hrpc|redis|grpc port connections depth (method request-hex [token-file] | redis arguments)
    local protocol=$1 port=$2 connections=$3 depth=$4
    shift 4
    for _ in $(seq "$REPEATS"); do cload_once "$connections" "$depth" "$protocol" "$port" "$@"; done | median
}

# Alternating pairs: a run's rate moves with the machine from one second to the next (±50% here),
# so a median of runs of one server and then of the other can differ by the machine's mood alone.
# cload_pairs runs PAIRS pairs (default 8) of one cload run against homed then one against Redis,
# same shape and length, and prints pair_summary's line.
#   cload_pairs CONNECTIONS DEPTH HRPC-PORT "METHOD REQUEST-HEX [TOKEN-FILE]" REDIS-PORT "REDIS ARGUMENTS"
cload_pairs() {
    cload_pairs_of "$1" "$2" "hrpc $3 $4" "redis $5 $6"
}

# The same for any two servers: each side is "PROTOCOL PORT ARGUMENTS..." as cload_once takes them.
#   cload_pairs_of CONNECTIONS DEPTH "OURS" "THEIRS"
cload_pairs_of() {
    local connections=$1 depth=$2 ours_call=$3 theirs_call=$4 ours theirs
    for _ in $(seq "${PAIRS:-8}"); do
        # shellcheck disable=SC2086  # the call's words are separate arguments
        ours=$(cload_once "$connections" "$depth" $ours_call) || exit 1
        # shellcheck disable=SC2086
        theirs=$(cload_once "$connections" "$depth" $theirs_call) || exit 1
        echo "$ours $theirs"
    done | pair_summary
}

# Reads "OURS THEIRS" rate pairs, one per line, and prints one line: homed's median, Redis's median,
# the ratio of the medians, the ratio of the sums, the lowest and highest pair ratio, and how many
# pairs were ≥ 1.
pair_summary() {
    awk '
        { h[NR] = $1; r[NR] = $2; hs += $1; rs += $2; q = $1 / $2
          if (NR == 1 || q < lo) lo = q; if (NR == 1 || q > hi) hi = q; if (q >= 1) up++ }
        function med(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        END { mh = med(h, NR); mr = med(r, NR)
              printf "%d %d %.2f %.2f %.2f %.2f %d/%d\n", mh, mr, mh / mr, hs / rs, lo, hi, up + 0, NR }'
}
