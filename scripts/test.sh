#!/usr/bin/env bash
# The test command of the README: fetch the Debian test data, then run every test.
# Tests that compare with BWA need `bwa` on the PATH (apt-get install bwa).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/get-data.sh >/dev/null
cargo test --release --workspace
