#!/usr/bin/env bash
# Idempotent development setup: .venv with dflab installed editable, engine compiled (release).
set -euo pipefail
cd "$(dirname "$0")/.."

# The Rust extension is compiled by maturin during the install; it needs cargo on PATH.
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
    # shellcheck disable=SC1091
    source "$HOME/.cargo/env"
fi
command -v cargo >/dev/null 2>&1 || { echo "error: cargo not found (install Rust: rustup.rs)" >&2; exit 2; }

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
# Profile-guided build of the engine (scripts/pgo.sh; DFLAB_PGO=0 skips it). The PGO build has its
# own target directory, so that it and the plain `cargo test` builds do not rebuild each other.
profile=$(bash scripts/pgo.sh)
if [ -n "$profile" ]; then
    export RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$profile -Cllvm-args=-pgo-warn-missing-function=false"
    export CARGO_TARGET_DIR="$PWD/target/pgo-use"
    export DFLAB_PGO_PROFILE="$profile"
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev]"
