#!/usr/bin/env bash
# A/B timing of two engine versions, the way the engine's speed-ups are measured
# (docs/perf-log.md): each version is built as `dflab bench` runs it (profile-guided,
# scripts/pgo.sh, as dflab-py's `run` example), then the two binaries run the same experiment
# alternately, so that the host's drift (which moves wall time more than most engine changes)
# hits both alike.
#
#   bash scripts/ab.sh A B [ROUNDS] [EXPERIMENT_JSON]
#
# A and B are git revisions, or `.` for the working tree. Prints, per version, the median and
# minimum wall ns per router traversal and the median over rounds of its ratio to A's.
# Default: 12 rounds of qadaptive-1056, UR 0.5, MIN, 10 µs warm-up + 40 µs. Builds and git
# worktrees of revisions stay in target/ab for the next comparison; `rm -rf target/ab && git
# worktree prune` removes them.
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 2 ] || { echo "usage: scripts/ab.sh A B [ROUNDS] [EXPERIMENT_JSON]" >&2; exit 2; }
rounds=${3:-12}
experiment=${4:-'{"traffic": {"load": 0.5}, "run": {"warmup_us": 10.0, "measure_us": 40.0}}'}
work=target/ab
mkdir -p "$work"
root=$PWD

# Build revision $1 (or the working tree) into $work/bin-<label>; print the binary's path.
build() {
    local rev=$1 label src
    if [ "$rev" = . ]; then
        label=worktree
        src=$root
    else
        label=$(git rev-parse --short "$rev")
        src=$root/$work/src-$label
        if [ ! -d "$src" ]; then
            git worktree add --detach --force "$src" "$rev" >&2
        fi
        # Revisions before the example existed get it: it only drives the engine.
        mkdir -p "$src/crates/dflab-py/examples"
        [ -f "$src/crates/dflab-py/examples/run.rs" ] || cp crates/dflab-py/examples/run.rs "$src/crates/dflab-py/examples/"
    fi
    local profile
    profile=$(cd "$src" && bash scripts/pgo.sh)
    [ -n "$profile" ] || { echo "ab: no PGO profile for $rev (llvm-profdata missing?)" >&2; exit 1; }
    (cd "$src" && RUSTFLAGS="-Cprofile-use=$profile -Cllvm-args=-pgo-warn-missing-function=false" \
        CARGO_TARGET_DIR="$root/$work/target-$label" cargo build --release --quiet -p dflab-py --example run >&2)
    cp "$root/$work/target-$label/release/examples/run" "$root/$work/bin-$label"
    echo "$root/$work/bin-$label"
}

a=$(build "$1")
b=$(build "$2")
[ "$a" != "$b" ] || { echo "ab: A and B are the same version" >&2; exit 2; }
for r in $(seq "$rounds"); do
    for bin in "$a" "$b"; do
        ns=$("$bin" "$experiment" | python3 -c 'import json, sys; print(json.load(sys.stdin)["ns_per_router_traversal"])')
        echo "$r $(basename "$bin") $ns"
    done
done | python3 -c '
import collections, statistics, sys
runs, order = collections.defaultdict(dict), []
for line in sys.stdin:
    r, name, ns = line.split()
    runs[name][r] = float(ns)
    if name not in order:
        order.append(name)
base = runs[order[0]]
for name in order:
    v = runs[name]
    ratio = statistics.median(v[r] / base[r] for r in v)
    print(f"{name}: median {statistics.median(v.values()):.1f} ns, min {min(v.values()):.1f} ns, "
          f"ratio to A {ratio:.3f} ({len(v)} rounds)")
'
