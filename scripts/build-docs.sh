#!/usr/bin/env bash
# Builds the Swift SDK's DocC documentation (Sources/HomeClient/HomeClient.docc and the doc comments
# of everything HomeClient makes public, re-exported modules included) and fails on any warning: a
# broken symbol link, an undocumented parameter, an article that names what is not there.
#
#   scripts/build-docs.sh [OUTPUT]   # default: .build-docs/HomeClient.doccarchive
#
# It uses the toolchain's docc directly (no plugin, so the package gains no dependency); its build
# goes to .build-docs, apart from the tests' .build.
set -euo pipefail
cd "$(dirname "$0")/.."
output="${1:-.build-docs/HomeClient.doccarchive}"
graphs="$(mktemp -d)"
trap 'rm -rf "$graphs"' EXIT

swift build --target HomeClient --scratch-path .build-docs \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs/all" \
    -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public 2>&1 | tail -1
mkdir "$graphs/HomeClient"
cp "$graphs/all"/HomeClient.symbols.json "$graphs/all"/HomeClient@*.symbols.json "$graphs/HomeClient/"
docc convert Sources/HomeClient/HomeClient.docc \
    --additional-symbol-graph-dir "$graphs/HomeClient" \
    --fallback-display-name HomeClient --fallback-bundle-identifier org.homerpc.HomeClient \
    --warnings-as-errors --output-path "$output"
echo "documentation: $output"
