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

# cload (bench/cload/cload.c): a C client that speaks both protocols through one code path, so that
# neither server is limited by its client (loadgen spends more per call on our protocol than on
# RESP, and saturates its core first). Built with gcc into bench/cload/.build.
build_cload() {
    command -v gcc >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc >/dev/null
    mkdir -p bench/cload/.build
    gcc -O2 -Wall -Wextra -Werror -o bench/cload/.build/cload bench/cload/cload.c
    CLOAD="$PWD/bench/cload/.build/cload"
}

cload_rate() {  # hrpc|redis port connections depth (method request-hex [token-file] | redis arguments)
    local protocol=$1 port=$2 connections=$3 depth=$4
    shift 4
    for _ in $(seq "$REPEATS"); do
        taskset -c 1 "$CLOAD" "$protocol" 127.0.0.1 "$port" "$connections" "$depth" "$SECONDS_PER_RUN" 1 "$@" \
            || { echo "cload failed" >&2; exit 1; }
    done | median
}
