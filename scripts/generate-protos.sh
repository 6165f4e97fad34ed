#!/usr/bin/env bash
# Regenerates Sources/HomeProto/Generated/ from proto/home/v1/*.proto.
#
# Uses Debian's protoc and a protoc-gen-swift built once from the swift-protobuf version that
# Package.swift pins, in the git-ignored folder .build-protoc/ (about a minute the first time).
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT_PROTOBUF_VERSION=1.39.0
PLUGIN_DIR=.build-protoc
PLUGIN="$PLUGIN_DIR/swift-protobuf/.build/release/protoc-gen-swift"
OUT=Sources/HomeProto/Generated

command -v protoc >/dev/null || scripts/install-packages.sh
if [ ! -x "$PLUGIN" ]; then
    mkdir -p "$PLUGIN_DIR"
    if [ ! -d "$PLUGIN_DIR/swift-protobuf" ]; then
        git clone --quiet --branch "$SWIFT_PROTOBUF_VERSION" \
            https://github.com/apple/swift-protobuf "$PLUGIN_DIR/swift-protobuf"
    fi
    (cd "$PLUGIN_DIR/swift-protobuf" && swift build -c release --product protoc-gen-swift)
fi

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
