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
cargo test --release --workspace
.venv/bin/ruff check python tests experiments
.venv/bin/ruff format --check python tests experiments
.venv/bin/pytest -q tests/python
