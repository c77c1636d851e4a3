#!/usr/bin/env bash
# Q-adaptive studies (docs/qadaptive.md).
#
#   experiments/qadaptive/run.sh FILE.toml [more dflab sweep args]   full sweep via the CLI
#   experiments/qadaptive/run.sh all                                 every study, one by one
#   experiments/qadaptive/run.sh check FILE.toml [measure_us]        smoke test: each routing
#       of the file's sweep, its first traffic and load, 1 µs + 5 µs (default) with checks on
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

case "${1:-}" in
check)
    file="$2"; measure="${3:-5}"
    read -r routings traffic load < <(python3 -c "
import sys, tomllib
d = tomllib.load(open(sys.argv[1], 'rb')); s = d.get('sweep', {})
r = s.get('routings') or [d.get('routing', {}).get('algorithm', 'MIN')]
t = (s.get('traffics') or [d.get('traffic', {}).get('pattern', 'ur')])[0]
l = (s.get('loads') or [d.get('traffic', {}).get('load', 0.5)])[0]
print(','.join(r), t, l)" "$file")
    for r in ${routings//,/ }; do
        echo "== $file :: $r"
        .venv/bin/dflab run "$file" --routing "$r" --traffic "$traffic" --load "$load" \
            --warmup-us 1 --measure-us "$measure" --check --json \
            | python3 -c "import json,sys;s=json.load(sys.stdin);print({k:round(s[k],4) for k in ('offered_load','accepted_load','latency_mean_ns','hops_mean','minimal_fraction')})"
    done
    ;;
all)
    for f in "$here"/fig*.toml "$here"/qrouting_maxq.toml; do
        name=$(basename "$f" .toml)
        .venv/bin/dflab sweep "$f" --jobs 2 --out "results/qadaptive/$name"
    done
    ;;
"")
    sed -n 2,10p "$0"; exit 2
    ;;
*)
    f="$1"; shift
    .venv/bin/dflab sweep "$f" --jobs 2 --out "results/qadaptive/$(basename "$f" .toml)" "$@"
    ;;
esac
