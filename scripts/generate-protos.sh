#!/usr/bin/env bash
# Regenerates Sources/HomeProto/Generated/ (Swift) and clients/c/generated/ (protobuf-c, for the C
# client SDK) from proto/home/v1/*.proto.
#
# Uses Debian's protoc, protoc-gen-swift built from the swift-protobuf version that Package.swift
# pins (the package's own dependency, in .build/), and Debian's protoc-c.
set -euo pipefail
cd "$(dirname "$0")/.."

PLUGIN=.build/debug/protoc-gen-swift
OUT=Sources/HomeProto/Generated

C_OUT=clients/c/generated

command -v protoc >/dev/null && command -v protoc-c >/dev/null || scripts/install-packages.sh
# The plugin is built from the swift-protobuf checkout the package already resolved (same version,
# no download; a few seconds once the library is built).
swift build --product protoc-gen-swift >/dev/null

# google/protobuf/descriptor.proto (which home/v1/options.proto extends) from the same checkout:
# Debian's protoc package does not ship it.
DESCRIPTOR_PROTOS=.build/checkouts/swift-protobuf/Protos/Sources/SwiftProtobuf

rm -rf "$OUT"
mkdir -p "$OUT"
protoc \
    --plugin=protoc-gen-swift="$PLUGIN" \
    --proto_path=proto \
    --proto_path="$DESCRIPTOR_PROTOS" \
    --swift_opt=Visibility=Public \
    --swift_opt=FileNaming=DropPath \
    --swift_opt=UseAccessLevelOnImports=true \
    --swift_out="$OUT" \
    proto/home/v1/*.proto
echo "generated $(ls "$OUT" | wc -l) files in $OUT"

# protoc-c 1.4 predates proto3's `optional`; each such field becomes the one-field oneof that
# `optional` stands for (same wire format, presence kept: protobuf-c's `_NAME_case`).
c_protos="$(mktemp -d)"
trap 'rm -rf "$c_protos"' EXIT
cp -r proto/home "$c_protos/"
sed -i -E 's/^( *)optional ([A-Za-z0-9_.]+) ([a-z0-9_]+) = ([0-9]+);/\1oneof _\3 { \2 \3 = \4; }/' "$c_protos"/home/v1/*.proto
# The C SDK needs the messages only: the method options (and so descriptor.proto, which
# libprotobuf-c-dev does not ship) are left out of its copy.
rm "$c_protos/home/v1/options.proto"
sed -i -E '/^import "home\/v1\/options.proto";$/d; /^ *option \(home\.v1\.[a-z_]+\) = .*;$/d' "$c_protos"/home/v1/*.proto
rm -rf "$C_OUT"
mkdir -p "$C_OUT"
protoc --proto_path="$c_protos" --c_out="$C_OUT" "$c_protos"/home/v1/*.proto
echo "generated $(ls "$C_OUT/home/v1" | wc -l) files in $C_OUT"
