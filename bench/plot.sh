#!/usr/bin/env bash
# Turns `loadgen fleet --json` output into PNG charts (Python with matplotlib, installed if missing):
#   a rate sweep (`--rate-sweep N --json`): PREFIX-latency.png, p50 and p99 of each operation kind
#   against the rate offered to it, and PREFIX-throughput.png, completions per second of each kind
#   over the run (warm-ups included);
#   a single run: PREFIX-throughput.png only.
# Usage: bench/plot.sh RESULT.json [PREFIX]      (PREFIX defaults to RESULT without .json)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bench/plot.sh RESULT.json [PREFIX]" >&2; exit 64; }
input=$1
prefix=${2:-${input%.json}}
# Debian's python3 is the one apt installs matplotlib for (another python3 may come first in PATH).
PYTHON=python3
[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
if ! "$PYTHON" -c 'import matplotlib' 2>/dev/null; then
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-matplotlib >/dev/null
fi
"$PYTHON" - "$input" "$prefix" <<'PY'
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

source, prefix = sys.argv[1], sys.argv[2]
result = json.load(open(source))
kinds = ["report", "read", "write", "execute", "notification"]
colors = dict(zip(kinds, ["tab:blue", "tab:green", "tab:red", "tab:purple", "tab:orange"]))

if "steps" in result:
    figure, axes = plt.subplots(figsize=(9, 5.5))
    for kind in kinds:
        points = [(s[kind]["offered_per_second"], s[kind]["p50_us"] / 1000, s[kind]["p99_us"] / 1000)
                  for s in result["steps"] if kind in s and s[kind]["offered_per_second"] > 0]
        if not points:
            continue
        offered = [p[0] for p in points]
        axes.plot(offered, [p[2] for p in points], "-o", color=colors[kind], label=f"{kind} p99")
        axes.plot(offered, [p[1] for p in points], "--", color=colors[kind], alpha=0.6, label=f"{kind} p50")
    knee = result.get("knee_factor")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("rate offered to the operation kind (operations/s, log scale)")
    axes.set_ylabel("latency from intended start (ms, log scale)")
    axes.set_title(f"loadgen fleet rate sweep: latency against offered rate (knee at ×{knee})")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8, ncol=2)
    figure.tight_layout()
    figure.savefig(f"{prefix}-latency.png", dpi=110)
    print(f"{prefix}-latency.png")

timeline = result.get("timeline", [])
if timeline:
    figure, axes = plt.subplots(figsize=(9, 4.5))
    seconds = [t["second"] for t in timeline]
    for kind in kinds:
        if any(kind in t for t in timeline):
            axes.plot(seconds, [t.get(kind, 0) for t in timeline], color=colors[kind], label=kind)
    axes.set_xlabel("time since the load started (s)")
    axes.set_ylabel("completed per second")
    axes.set_title("loadgen fleet: throughput over time")
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(f"{prefix}-throughput.png", dpi=110)
    print(f"{prefix}-throughput.png")
PY
