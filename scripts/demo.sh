#!/usr/bin/env bash
# The demo: MIN vs VALn on the 1056-node Dragonfly (UR and ADV+1), then the latency/throughput plot.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
# A failed point (reported by the sweep, exit 1) should not hide the plot of the others.
status=0
.venv/bin/dflab sweep examples/demo.toml --jobs 2 --out results/demo || status=$?
.venv/bin/dflab plot results/demo --out results/demo/latency_throughput.png
exit "$status"
