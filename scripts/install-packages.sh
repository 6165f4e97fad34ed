#!/usr/bin/env bash
# Installs the Debian packages HomeRPC builds and runs with, if any is missing.
# Needs root (or sudo) only when something must be installed.
set -euo pipefail

# gcc and make build the C client SDK (clients/c); python3 runs Tests/DocsConformance and finds free ports;
# python3-venv holds the Python client's gRPC packages (clients/python); libnghttp2 is the gRPC door's HTTP/2;
# libssl is TLS on every listener and client, and openssl makes the tests' certificates; prometheus scrapes
# a live homed in the metrics check (Tests/DocsConformance/check_metrics.py).
PACKAGES=(pkg-config libuv1-dev libsqlite3-dev libnghttp2-dev libssl-dev openssl protobuf-compiler libprotobuf-c-dev protobuf-c-compiler gcc make python3 python3-venv prometheus)

missing=()
for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
