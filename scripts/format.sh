#!/usr/bin/env bash
# Formats the Swift sources in place with the toolchain's swift-format and .swift-format;
# with -l, only lints (strict: any finding fails). Generated code opts out with its own
# `// swift-format-ignore-file` header.
set -euo pipefail
cd "$(dirname "$0")/.."
# The bench packages too: they are built by hand, not by CI, so nothing else would check them.
paths=(Package.swift Sources Tests fuzz/Package.swift fuzz/Sources bench/core/Package.swift bench/core/Sources
    bench/grpc/Package.swift bench/grpc/Sources)
if [ "${1:-}" = "-l" ]; then
    swift format lint --strict --recursive --parallel "${paths[@]}"
else
    swift format format --in-place --recursive --parallel "${paths[@]}"
fi
