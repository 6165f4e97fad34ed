#!/usr/bin/env bash
# Checks that another package can depend on HomeRPC by URL and version, as a new user's would, and
# call a live homed with the Swift SDK: clones this repository's HEAD into a temporary folder, tags
# the clone with homed's version, builds a small consumer package against that tag (SwiftPM refuses a
# dependency whose products carry unsafe flags), and runs it against a homed of its own.
#
#   scripts/check-consumer.sh [HOMED]   # HOMED: the server binary (default: the debug build's)
set -euo pipefail
homed="$(realpath -m "${1:-}")"  # before the cd: a path relative to the caller's folder
cd "$(dirname "$0")/.."
root="$PWD"
[ -n "${1:-}" ] || homed="$(swift build --show-bin-path)/homed"
[ -x "$homed" ] || { echo "no homed at $homed: build it, or name it" >&2; exit 1; }
version="$(sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/HomedCommand/Homed.swift)"
work="$(mktemp -d)"
homed_pid=""
cleanup() {
    if [ -n "$homed_pid" ]; then
        kill "$homed_pid" 2>/dev/null || true
        wait "$homed_pid" 2>/dev/null || true  # SIGTERM's status: not a failure of the check
    fi
    rm -rf "$work"
}
trap cleanup EXIT

git clone -q "$root" "$work/HomeRPC"
git -C "$work/HomeRPC" tag "$version"
mkdir -p "$work/consumer/Sources/consumer"
cat >"$work/consumer/Package.swift" <<EOF
// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "consumer",
    platforms: [.macOS(.v15)],
    dependencies: [.package(url: "file://$work/HomeRPC", from: "$version")],
    targets: [
        .executableTarget(name: "consumer", dependencies: [.product(name: "HomeClient", package: "HomeRPC")])
    ]
)
EOF
cat >"$work/consumer/Sources/consumer/main.swift" <<'EOF'
import Foundation
import HomeClient

// consumer ENDPOINT TOKEN-FILE: adds a home with a room, then lists the homes.
let arguments = CommandLine.arguments
guard arguments.count == 3, let endpoint = Endpoint(parsing: arguments[1]) else {
    print("usage: consumer ENDPOINT TOKEN-FILE")
    exit(2)
}
let token = try String(contentsOfFile: arguments[2], encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
let client = HomeClient(endpoint: endpoint, token: token)
let home = try await client.addHome(named: "Consumer Home")
let room = try await client.home(home.id.uuid).addRoom(named: "Study")
let homes = try await client.listHomes().map(\.name)
print("homes: \(homes.joined(separator: ", ")); added \(room.name) to \(home.name)")
await client.close()
EOF

echo "== a package depending on HomeRPC $version by URL resolves and builds"
swift build --package-path "$work/consumer" 2>&1 | tail -3
echo "== it calls a live homed"
(cd "$work" && exec "$homed" --port 0 --unix-socket "$work/homed.sock" --store "$work/store.sqlite" \
    --owner-token-file "$work/owner.token" --log-level warning) &
homed_pid=$!
for _ in $(seq 300); do
    [ -S "$work/homed.sock" ] && [ -s "$work/owner.token" ] && break
    kill -0 "$homed_pid" 2>/dev/null || { echo "homed exited before it listened" >&2; exit 1; }
    sleep 0.1
done
output="$("$work/consumer/.build/debug/consumer" "unix:$work/homed.sock" "$work/owner.token")"
echo "$output"
[ "$output" = "homes: Consumer Home; added Study to Consumer Home" ] || { echo "unexpected output" >&2; exit 1; }
