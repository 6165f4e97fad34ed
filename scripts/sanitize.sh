#!/usr/bin/env bash
# Runs tests under AddressSanitizer (with LeakSanitizer) in a separate build folder.
# Usage: scripts/sanitize.sh [filter]   (default: UVTests, the tests of the libuv layer)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-packages.sh
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=0"
export ASAN_OPTIONS="suppressions=$PWD/scripts/asan-suppressions.txt"
swift test --scratch-path .build-asan --sanitize=address --filter "${1:-UVTests}"
