#!/usr/bin/env bash
# Prepares .carry/ (ignored by git) for the device machine: the release binary, the ancient-DNA simulator, Debian's bwa,
# dwgsim and art_illumina binaries (with the GSL libraries art_illumina needs, in .carry/lib),
# the test data, compressed, and the commit (.carry/commit, for the benchmark tables). Then
# run `bash scripts/gpu-check.sh` there with carry [".carry"] (see docs/gpu.md).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/get-data.sh >/dev/null
cargo build --release --quiet -p bcuda -p bcuda-dev
rm -rf .carry && mkdir -p .carry/data
cp target/release/bcuda target/release/bcuda-dev .carry/ && strip .carry/bcuda .carry/bcuda-dev
# The benchmark's ancient-DNA reads (bench/human-like.sh REGIME=adna).
cargo build --release --quiet --example sim_adna
cp target/release/examples/sim_adna .carry/ && strip .carry/sim_adna
tmp=$(mktemp -d)
(cd "$tmp" && apt-get download bwa dwgsim art-nextgen-simulation-tools libgsl27 libgslcblas0 >/dev/null 2>&1 \
    && for deb in *.deb; do dpkg -x "$deb" root; done)
cp "$tmp"/root/usr/bin/{bwa,dwgsim,art_illumina} .carry/
# Under their sonames, as plain files (links may not travel).
mkdir -p .carry/lib && cp -L "$tmp"/root/usr/lib/x86_64-linux-gnu/{libgsl.so.27,libgslcblas.so.0} .carry/lib/
rm -rf "$tmp"
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo -dirty)" > .carry/commit
for g in lambda ecoli536; do
    gzip -c data/$g.fa > .carry/data/$g.fa.gz
    gzip -c data/${g}_art.fq > .carry/data/${g}_art.fq.gz
done
for L in 36 76 150 250; do python3 scripts/sim-reads.py data/ecoli536.fa $L 20000 $L | gzip > .carry/data/sim$L.fq.gz; done
cp scripts/synth-genome.py scripts/sim-reads.py .carry/
du -sh .carry
# The device tool carries at most 64 MiB.
[ "$(du -sm .carry | cut -f1)" -lt 64 ] || { echo ".carry is over 64 MiB" >&2; exit 1; }
