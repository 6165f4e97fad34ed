#!/usr/bin/env bash
# Sets up and runs every check CI runs: installs missing Debian packages, builds everything (any
# compiler warning fails), lints formatting (any finding fails), then runs the tests: the Swift
# package's, a client written only from docs/ checking a homed against them, then the C client SDK's
# against a homed of its own, then grpcio stubs generated from proto/ on homed's gRPC door, then a
# package depending on this one by URL and version calling a homed, then the SDK's DocC.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-packages.sh

echo "== build (warnings are errors)"
build_log="$(mktemp)"
trap 'rm -f "$build_log"' EXIT
# Every import must be a declared dependency of its target (as swift-nio's CI checks).
swift build --build-tests --explicit-target-dependency-import-check error 2>&1 | tee "$build_log"
# Our own warnings only: SwiftPM silences dependencies' warnings.
if grep -E "warning:" "$build_log" | grep -v "^warning: (unknown|'[a-z-]+'): .*(remote|mirror)"; then
    echo "compiler or package warnings found (listed above)" >&2
    exit 1
fi

echo "== generated code matches proto/ and the catalog"
scripts/check-generated.sh

echo "== swift format lint --strict"
scripts/format.sh -l

echo "== tests"
timeout --signal=INT 1800 swift test

echo "== a client written from the documents (Tests/DocsConformance)"
python3 Tests/DocsConformance/check_docs.py "$(swift build --show-bin-path)/homed"
python3 Tests/DocsConformance/check_homekit.py "$(swift build --show-bin-path)/homed"
python3 Tests/DocsConformance/fuzz_requests.py "$(swift build --show-bin-path)/homed"
python3 -W ignore::DeprecationWarning Tests/DocsConformance/check_tls.py "$(swift build --show-bin-path)/homed"
python3 Tests/DocsConformance/check_metrics.py "$(swift build --show-bin-path)/homed"

echo "== C client SDK (clients/c)"
clients/c/test.sh

echo "== a Python client generated from proto/ by grpcio-tools, on the gRPC door (clients/python)"
clients/python/test.sh

echo "== the Swift SDK as another package's dependency"
scripts/check-consumer.sh "$(swift build --show-bin-path)/homed"

echo "== the Swift SDK's documentation (DocC, warnings are errors)"
scripts/build-docs.sh
