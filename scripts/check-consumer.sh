#!/usr/bin/env bash
# Checks that another package can depend on HomeRPC by URL and version, as a new user's would, and
# call a live homed with the Swift SDK: clones this repository's HEAD into a temporary folder, tags
# the clone with homed's version, builds a consumer package against that tag with `traits: []`
# (SwiftPM refuses a dependency whose products carry unsafe flags; the SDK must fetch only
# swift-protobuf and swift-log), runs Tests/Consumer/main.swift (a service checking the SDK's
# promises against a homed it runs and kills -9), then the getting-started article's program
# (Sources/HomeClient/HomeClient.docc/GettingStarted.md) against another homed.
#
#   scripts/check-consumer.sh [HOMED]   # HOMED: the server binary (default: the debug build's)
set -euo pipefail
homed="${1:+$(realpath -m "$1")}"  # before the cd: a path relative to the caller's folder
cd "$(dirname "$0")/.."
root="$PWD"
[ -n "${1:-}" ] || homed="$(swift build --show-bin-path)/homed"
[ -x "$homed" ] || { echo "no homed at $homed: build it, or name it" >&2; exit 1; }
version="$(sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/HomedCommand/Homed.swift)"
work="$(mktemp -d)"
homed_pid=""
mute_pid=""
cleanup() {
    [ -z "$mute_pid" ] || kill "$mute_pid" 2>/dev/null || true
    if [ -n "$homed_pid" ]; then
        kill "$homed_pid" 2>/dev/null || true
        wait "$homed_pid" 2>/dev/null || true  # SIGTERM's status: not a failure of the check
    fi
    rm -rf "$work"
}
trap cleanup EXIT

git clone -q "$root" "$work/HomeRPC"
git -C "$work/HomeRPC" tag "$version"
mkdir -p "$work/consumer/Sources/consumer" "$work/consumer/Sources/getting-started"
# traits: [] leaves out the server's and tools' dependencies: SwiftPM must not even fetch them.
cat >"$work/consumer/Package.swift" <<EOF
// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "consumer",
    platforms: [.macOS(.v15)],
    dependencies: [.package(url: "file://$work/HomeRPC", from: "$version", traits: [])],
    targets: [
        .executableTarget(name: "consumer", dependencies: [.product(name: "HomeClient", package: "HomeRPC")]),
        .executableTarget(name: "getting-started", dependencies: [.product(name: "HomeClient", package: "HomeRPC")]),
    ]
)
EOF
cp Tests/Consumer/main.swift "$work/consumer/Sources/consumer/main.swift"
# The getting-started article's program (its second Swift listing), as the article shows it.
awk '/^```swift$/ { n++; if (n == 2) { inside = 1; next } } /^```$/ { inside = 0 } inside' \
    Sources/HomeClient/HomeClient.docc/GettingStarted.md >"$work/consumer/Sources/getting-started/main.swift"
grep -q "HomeClient(" "$work/consumer/Sources/getting-started/main.swift" || { echo "no program in the article" >&2; exit 1; }

echo "== a package depending on HomeRPC $version by URL (traits: []) resolves and builds"
swift build --package-path "$work/consumer" 2>&1 | tail -3
fetched="$(ls "$work/consumer/.build/checkouts" | sort | tr '\n' ' ')"
echo "fetched: $fetched"
[ "$fetched" = "HomeRPC swift-log swift-protobuf " ] || { echo "the SDK pulled in more than it uses" >&2; exit 1; }

echo "== its service checks the SDK's promises against a homed it runs and kills"
# A server that accepts and never answers: for the connect-time deadline.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
held = []
while True: held.append(s.accept()[0])
' "$work/mute.sock" &
mute_pid=$!
for _ in $(seq 100); do [ -S "$work/mute.sock" ] && break; sleep 0.05; done
mkdir "$work/service"
"$work/consumer/.build/debug/consumer" "$homed" "$work/service" "$work/mute.sock"
kill "$mute_pid" 2>/dev/null || true

echo "== the getting-started article's program runs"
(cd "$work" && exec "$homed" --port 0 --unix-socket "$work/homed.sock" --store "$work/store.sqlite" \
    --owner-token-file "$work/owner.token" --log-level warning) &
homed_pid=$!
for _ in $(seq 300); do
    [ -S "$work/homed.sock" ] && [ -s "$work/owner.token" ] && break
    kill -0 "$homed_pid" 2>/dev/null || { echo "homed exited before it listened" >&2; exit 1; }
    sleep 0.1
done
HOMED_ENDPOINT="unix:$work/homed.sock" HOMED_TOKEN="$(cat "$work/owner.token")" \
    "$work/consumer/.build/debug/getting-started"
