#!/usr/bin/env bash
set -euo pipefail
# Licenses of the Rust dependencies, shipped with the package (bioconda's rule for Rust).
cargo-bundle-licenses --format yaml --output THIRDPARTY.yml
cargo install --no-track --locked --verbose --root "${PREFIX}" --path .
