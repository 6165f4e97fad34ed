#!/usr/bin/env bash
# Makes clients/python/.venv (gRPC for Python, from requirements.txt) and generates the stubs of every
# service in proto/ into clients/python/generated with grpcio-tools' protoc: what any language does
# with protoc and its gRPC plugin. Prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")"
ROOT="$(cd ../.. && pwd)"

if [ ! -x .venv/bin/python ]; then
    # Debian's python3 needs python3-venv for this; scripts/install-packages.sh installs it.
    python3 -m venv .venv >&2
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt >&2

rm -rf generated && mkdir -p generated
WELL_KNOWN="$(.venv/bin/python -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"
# shellcheck disable=SC2046 # one argument per .proto file
.venv/bin/python -m grpc_tools.protoc -I"$ROOT/proto" -I"$WELL_KNOWN" \
    --python_out=generated --grpc_python_out=generated $(find "$ROOT/proto" -name "*.proto" | sort)
echo "$PWD/.venv/bin/python"
