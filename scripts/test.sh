#!/usr/bin/env bash
# Full check: Rust format, lints and tests, then Python lint and tests.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
if [ -f "$HOME/.cargo/env" ]; then
    # shellcheck disable=SC1091
    source "$HOME/.cargo/env"
fi

cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
# Optimised, with the engine's debug assertions on (the hot path's internal checks: order of
# the request lists, marked requests facing full buffers, queue and FIFO bookkeeping), which a
# plain release build compiles out. The `ci-test` profile (Cargo.toml) has no LTO, so the test
# binaries link in seconds, and builds into target/ci-test, apart from the release build.
cargo test --profile ci-test --workspace
.venv/bin/ruff check python tests experiments
.venv/bin/ruff format --check python tests experiments
# One worker per core (pytest-xdist): every test is independent of the others' order.
.venv/bin/pytest -q -n auto tests/python
