#!/usr/bin/env bash
# Builds and runs the frame-decoder fuzzer for SECONDS (default 600), seeded from Seeds/ (the golden frames of docs/PROTOCOL.md) and
# FailCases/. New crashing inputs land in fuzz/ as crash-*: copy each into FailCases/ (the unit tests
# replay that folder), fix the bug, commit both.
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_TO_RUN="${1:-600}"
./build.sh
BIN="$(swift build -c release --sanitize=fuzzer --sanitize=address --show-bin-path)/FuzzFrameDecoder"
mkdir -p corpus
cp FailCases/* Seeds/* corpus/
"$BIN" corpus -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -print_final_stats=1 -dict=frames.dict
