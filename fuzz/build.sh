#!/usr/bin/env bash
# Builds the fuzzer with libFuzzer and AddressSanitizer into fuzz/.build.
set -euo pipefail
cd "$(dirname "$0")"
BIN_DIR="$(swift build -c release --sanitize=fuzzer --sanitize=address --show-bin-path)"
# Always from clean, build database and manifest included: with Swift 6.3.1 a rebuild sometimes drops
# -sanitize=fuzzer between the driver and the frontend, producing a binary with no coverage counters
# ("Is the code instrumented?"). It happens on some clean builds too, not on others (seen twice in a
# row, then not), so the build is checked and tried again, up to three times.
for attempt in 1 2 3; do
    rm -rf .build/release .build/*/release .build/build.db .build/release.yaml
    swift build -c release --sanitize=fuzzer --sanitize=address
    probe="$("$BIN_DIR/FuzzFrameDecoder" -runs=1 2>&1 || true)"
    if grep -q "inline 8-bit counters" <<<"$probe"; then
        echo "built $BIN_DIR/FuzzFrameDecoder"
        exit 0
    fi
    echo "attempt $attempt: the fuzzer binary has no coverage instrumentation" >&2
done
exit 1
