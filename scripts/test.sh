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
# plain release build compiles out; a target directory of its own keeps the release build's.
CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true CARGO_TARGET_DIR=target/test-dbg cargo test --release --workspace
.venv/bin/ruff check python tests experiments
.venv/bin/ruff format --check python tests experiments
.venv/bin/pytest -q tests/python
