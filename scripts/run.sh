#!/usr/bin/env bash
# Sets up and starts the server: installs missing Debian packages, builds homed in release mode, and
# runs it in the foreground on 127.0.0.1:7420. Arguments are passed to homed (see --help).
# Stop it with Ctrl-C (SIGINT) or SIGTERM: it drains calls in flight, then exits.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-packages.sh
scripts/build-release.sh --product homed >&2
exec "$(swift build -c release --show-bin-path)/homed" "$@"
