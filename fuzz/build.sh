#!/usr/bin/env bash
# Builds the fuzzer with libFuzzer and AddressSanitizer into fuzz/.build.
set -euo pipefail
cd "$(dirname "$0")"
# Always from clean: with Swift 6.3.1 an incremental rebuild drops -sanitize=fuzzer between the driver
# and the frontend, producing a binary with no coverage counters ("Is the code instrumented?").
rm -rf .build/release .build/*/release
swift build -c release --sanitize=fuzzer --sanitize=address
BIN="$(swift build -c release --sanitize=fuzzer --sanitize=address --show-bin-path)/FuzzFrameDecoder"
probe="$("$BIN" -runs=1 2>&1 || true)"
if ! grep -q "inline 8-bit counters" <<<"$probe"; then
    echo "the fuzzer binary has no coverage instrumentation" >&2
    exit 1
fi
echo "built $BIN"
