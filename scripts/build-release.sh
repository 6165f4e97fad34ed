#!/usr/bin/env bash
# Builds in release mode with the project's tuning; arguments go to `swift build` (--product NAME).
#
# The tuning is passed here, not in Package.swift: SwiftPM refuses a dependency whose products carry
# unsafe flags, so the package itself has none, and a package that depends on HomeClient builds it
# with its own settings. The flags:
#   -enforce-exclusivity=unchecked   skips the runtime exclusivity checks (about 7% of a pipelined
#                                    call in perf: swift_beginAccess and its thread-local look-ups);
#                                    debug builds, and so every test run, keep them, and the
#                                    compile-time checks always apply;
#   -cross-module-optimization       lets the call path inline across our modules (Wire, RPCServer,
#                                    HomeAPI, HomeService).
# bench/instructions.sh --check (CI) counts the call path of a build made here.
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift build -c release -Xswiftc -enforce-exclusivity=unchecked -Xswiftc -cross-module-optimization "$@"
