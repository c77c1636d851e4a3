#!/usr/bin/env bash
# Profile-guided optimisation (PGO) of the engine, used by scripts/setup.sh.
#
# Builds an instrumented copy of the engine (the `pgo_train` example of dflab-py, which resolves
# dependencies exactly as the extension build does, so the symbol names match), runs the training
# scenarios of scripts/pgo-train.jsonl (every routing, UR and ADV, low and high load, periodic
# injection, multi-flit packets, a larger and a multi-link topology: the workload mix, not the
# bench scenarios alone), and merges the counts into target/pgo/dflab.profdata. Compiling the
# extension with `-Cprofile-use` of that file changes only code layout and inlining, never
# results (the identity scenarios give the same bytes); see docs/model.md §Speed for the gain.
#
# Prints the profile's absolute path on stdout when one is available, nothing otherwise (no
# llvm-profdata, or DFLAB_PGO=0): the caller then builds without PGO. A profile newer than every
# engine source is reused. Progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

[ "${DFLAB_PGO:-1}" = 0 ] && exit 0

out=target/pgo
profile=$out/dflab.profdata
inputs=(crates/dflab-core crates/dflab-py Cargo.toml Cargo.lock scripts/pgo.sh scripts/pgo-train.jsonl)
if [ -f "$profile" ] && [ -z "$(find "${inputs[@]}" -newer "$profile" -type f -print -quit)" ]; then
    echo "$PWD/$profile"
    exit 0
fi

# llvm-profdata ships with rustup's llvm-tools component, matching rustc's LLVM.
tool="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata"
if [ ! -x "$tool" ] && command -v rustup >/dev/null 2>&1; then
    echo "pgo: installing rustup component llvm-tools (for llvm-profdata)" >&2
    rustup component add llvm-tools >&2 || true
fi
if [ ! -x "$tool" ]; then
    echo "pgo: llvm-profdata not found ($tool); building the engine without PGO" >&2
    exit 0
fi

echo "pgo: building the instrumented engine and running $(wc -l <scripts/pgo-train.jsonl) training scenarios" >&2
rm -rf "$out/raw"
mkdir -p "$out/raw"
RUSTFLAGS="-Cprofile-generate=$PWD/$out/raw" CARGO_TARGET_DIR=target/pgo-gen \
    cargo build --release --quiet -p dflab-py --example pgo_train >&2
if ! target/pgo-gen/release/examples/pgo_train scripts/pgo-train.jsonl; then
    echo "pgo: a training scenario failed; building the engine without PGO" >&2
    exit 0
fi
"$tool" merge -o "$profile.tmp" "$out/raw"
mv "$profile.tmp" "$profile"
rm -rf "$out/raw"
echo "$PWD/$profile"
