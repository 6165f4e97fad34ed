#!/usr/bin/env bash
# Regenerates the protobuf code, the method lists (docs/API.md's tables among them) and the HAP
# catalog, and fails if any differs from what is committed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/generate-protos.sh
# The catalog is generated from docs/HAP-CATALOG.md, the standard types and their metadata.
scripts/generate-catalog.py
generated=(Sources/HomeProto/Generated clients/c/generated Sources/HomeService/Catalog/StandardCatalog+Generated.swift
    Sources/HomeAPI/Generated Sources/HomeClient/Generated clients/c/include/homerpc_methods.h docs/API.md)
if ! git diff --exit-code -- "${generated[@]}" || [ -n "$(git status --porcelain -- "${generated[@]}")" ]; then
    echo "Generated code is out of date: run scripts/generate-protos.sh and scripts/generate-catalog.py, and commit." >&2
    exit 1
fi
echo "generated code is up to date"
