#!/usr/bin/env bash
# Regenerates the protobuf code and fails if it differs from what is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/generate-protos.sh
if ! git diff --exit-code -- Sources/HomeProto/Generated \
    || [ -n "$(git status --porcelain -- Sources/HomeProto/Generated)" ]; then
    echo "Generated protobuf code is out of date: run scripts/generate-protos.sh and commit." >&2
    exit 1
fi
echo "generated code is up to date"
