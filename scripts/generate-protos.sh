#!/usr/bin/env bash
# Regenerates Sources/HomeProto/Generated/ from proto/home/v1/*.proto.
#
# Uses Debian's protoc and protoc-gen-swift built from the swift-protobuf version that Package.swift
# pins (the package's own dependency, in .build/).
set -euo pipefail
cd "$(dirname "$0")/.."

PLUGIN=.build/debug/protoc-gen-swift
OUT=Sources/HomeProto/Generated

command -v protoc >/dev/null || scripts/install-packages.sh
# The plugin is built from the swift-protobuf checkout the package already resolved (same version,
# no download; a few seconds once the library is built).
swift build --product protoc-gen-swift >/dev/null

rm -rf "$OUT"
mkdir -p "$OUT"
protoc \
    --plugin=protoc-gen-swift="$PLUGIN" \
    --proto_path=proto \
    --swift_opt=Visibility=Public \
    --swift_opt=FileNaming=DropPath \
    --swift_opt=UseAccessLevelOnImports=true \
    --swift_out="$OUT" \
    proto/home/v1/*.proto
echo "generated $(ls "$OUT" | wc -l) files in $OUT"
