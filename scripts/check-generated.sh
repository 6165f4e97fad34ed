#!/usr/bin/env bash
# Regenerates the protobuf code and the HAP catalog, and fails if either differs from what is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/generate-protos.sh
# The catalog's source lives outside the repository (../shared); without it, only the protobuf
# code can be checked.
if [ -f ../shared/HAP-CATALOG.md ]; then
    scripts/generate-catalog.py
else
    echo "../shared/HAP-CATALOG.md not found: the catalog is not regenerated" >&2
fi
generated=(Sources/HomeProto/Generated clients/c/generated Sources/HomeService/Catalog/StandardCatalog+Generated.swift)
if ! git diff --exit-code -- "${generated[@]}" || [ -n "$(git status --porcelain -- "${generated[@]}")" ]; then
    echo "Generated code is out of date: run scripts/generate-protos.sh and scripts/generate-catalog.py, and commit." >&2
    exit 1
fi
echo "generated code is up to date"
