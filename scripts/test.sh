#!/usr/bin/env bash
# The test command of the README: fetch the Debian test data, then run every test.
# Tests that compare with BWA need `bwa` on the PATH (apt-get install bwa); the harness's
# smoke check needs dwgsim too.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/get-data.sh >/dev/null
# The layout first (rustfmt.toml) and clippy's lints, where rustfmt and clippy are installed
# (.ci/run installs both); then no function over 120 lines.
if cargo fmt --version >/dev/null 2>&1; then cargo fmt --all --check; else echo "rustfmt not installed: layout not checked" >&2; fi
if cargo clippy --version >/dev/null 2>&1; then
    cargo clippy --release --workspace --all-targets -- -D warnings
else
    echo "clippy not installed: lints not checked" >&2
fi
python3 scripts/long-functions.py
cargo test --release --workspace
# The benchmark harness end to end in its CPU form (bench/run; about a minute).
./scripts/bench-smoke.sh
