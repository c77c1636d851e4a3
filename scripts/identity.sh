#!/usr/bin/env bash
# Fingerprint of the engine's results on the scenarios of scripts/identity.jsonl (every routing
# family, a phase change, periodic injection, a long global link, multi-flit packets with a
# bounded source queue): one line per scenario with the SHA-256 of its summary, wall-clock
# fields removed. An engine change meant to be byte-identical (a speed-up, a refactoring) must
# leave every line unchanged:
#
#   bash scripts/identity.sh > /tmp/before.txt   # on the old commit
#   bash scripts/identity.sh | diff /tmp/before.txt -
#
# It runs the binary of CARGO_TARGET_DIR (default `target`), so the same check covers a build
# with debug assertions on:
#
#   CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true CARGO_TARGET_DIR=target/dbgassert \
#       bash scripts/identity.sh | diff /tmp/before.txt -
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p dflab-py --example run
while IFS= read -r cfg; do
    [ -z "$cfg" ] && continue
    "${CARGO_TARGET_DIR:-target}/release/examples/run" "$cfg" \
        | grep -v -E '"(wall_s|ns_per_router_traversal|sim_us_per_wall_s)"' \
        | sha256sum | cut -c1-16 | tr -d '\n'
    echo "  $cfg"
done < scripts/identity.jsonl
