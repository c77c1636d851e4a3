#!/usr/bin/env bash
# Q-adaptive studies (docs/qadaptive.md).
#
#   experiments/qadaptive/run.sh FILE.toml [more dflab sweep args]   full sweep via the CLI
#   experiments/qadaptive/run.sh all                                 every study, one by one
#   experiments/qadaptive/run.sh check FILE.toml [measure_us]        engine-only smoke test:
#       preset + file + first value of each [sweep] list -> JSON -> Rust example `run`,
#       with a short run (default 5 µs), for each routing of the sweep. Works before the
#       Python front end knows the routing names.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

to_json() { # FILE ROUTING MEASURE_US
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys, tomllib
from pathlib import Path
path, routing, measure = sys.argv[1], sys.argv[2], float(sys.argv[3])
doc = tomllib.loads(Path(path).read_text())
preset = doc.pop("preset", None)
base = {}
if preset:
    base = tomllib.loads(Path("python/dflab/presets", preset + ".toml").read_text())
sweep = doc.pop("sweep", {})
def merge(a, b):
    for k, v in b.items():
        a[k] = merge(a.get(k, {}), v) if isinstance(v, dict) else v
    return a
exp = merge(base, doc)
exp.setdefault("routing", {})["algorithm"] = routing
if sweep.get("traffics"):
    exp.setdefault("traffic", {})["pattern"] = sweep["traffics"][0]
if sweep.get("loads"):
    exp.setdefault("traffic", {})["load"] = sweep["loads"][0]
exp.setdefault("run", {}).update({"warmup_us": 1.0, "measure_us": measure, "check": True})
print(json.dumps(exp))
PY
}

case "${1:-}" in
check)
    file="$2"; measure="${3:-5}"
    routings=$(python3 -c "import sys,tomllib;d=tomllib.load(open(sys.argv[1],'rb'));print(' '.join(d.get('sweep',{}).get('routings') or [d.get('routing',{}).get('algorithm','MIN')]))" "$file")
    for r in $routings; do
        json=$(to_json "$file" "$r" "$measure")
        echo "== $file :: $r"
        cargo run --release -q -p dflab-py --example run -- "$json" \
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
