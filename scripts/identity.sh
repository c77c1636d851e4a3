#!/usr/bin/env bash
# Byte identity of the engine's results: runs the identity test of dflab-core, which compares
# the fingerprint of every scenario of crates/dflab-core/tests/identity/scenarios.jsonl with
# the recorded crates/dflab-core/tests/identity/fingerprints.txt (the test suite runs it too).
# A change meant to keep results must pass it unchanged, also with the engine's debug
# assertions on:
#
#   bash scripts/identity.sh                  # optimised build
#   DFLAB_DEBUG_ASSERTIONS=1 bash scripts/identity.sh
#
# A change of the model's semantics bumps dflab_core::ENGINE_SEMANTICS and records new
# fingerprints with DFLAB_BLESS=1 bash scripts/identity.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=release
if [ "${DFLAB_DEBUG_ASSERTIONS:-0}" = 1 ]; then
    profile=ci-test # the test suite's profile: release optimisation with debug assertions
fi
exec cargo test --profile "$profile" -q -p dflab-core --test identity
