#!/usr/bin/env bash
# Prepares bundle/ (ignored by git) for the CUDA host: the release binary, the ancient-DNA simulator, Debian's bwa,
# dwgsim and art_illumina binaries (with the GSL libraries art_illumina needs, in bundle/lib),
# the test data, compressed, and the commit (bundle/commit, for the benchmark tables). Then
# run `bash scripts/gpu-check.sh` there with bundle/ (see docs/gpu.md).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/get-data.sh >/dev/null
cargo build --release --quiet -p bcuda -p bcuda-dev
rm -rf bundle && mkdir -p bundle/data
cp target/release/bcuda target/release/bcuda-dev bundle/ && strip bundle/bcuda bundle/bcuda-dev
# The benchmark's ancient-DNA reads (bench/human-like.sh REGIME=adna).
cargo build --release --quiet --example sim_adna
cp target/release/examples/sim_adna bundle/ && strip bundle/sim_adna
tmp=$(mktemp -d)
(cd "$tmp" && apt-get download bwa dwgsim art-nextgen-simulation-tools libgsl27 libgslcblas0 >/dev/null 2>&1 \
    && for deb in *.deb; do dpkg -x "$deb" root; done)
cp "$tmp"/root/usr/bin/{bwa,dwgsim,art_illumina} bundle/
# Under their sonames, as plain files (links may not travel).
mkdir -p bundle/lib && cp -L "$tmp"/root/usr/lib/x86_64-linux-gnu/{libgsl.so.27,libgslcblas.so.0} bundle/lib/
rm -rf "$tmp"
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo -dirty)" > bundle/commit
for g in lambda ecoli536; do
    gzip -c data/$g.fa > bundle/data/$g.fa.gz
    gzip -c data/${g}_art.fq > bundle/data/${g}_art.fq.gz
done
for L in 36 76 150 250; do python3 scripts/sim-reads.py data/ecoli536.fa $L 20000 $L | gzip > bundle/data/sim$L.fq.gz; done
cp scripts/synth-genome.py scripts/sim-reads.py bundle/
du -sh bundle
# Kept under 64 MiB, so that it copies to a CUDA host quickly.
[ "$(du -sm bundle | cut -f1)" -lt 64 ] || { echo "bundle is over 64 MiB" >&2; exit 1; }
