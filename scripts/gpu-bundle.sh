#!/usr/bin/env bash
# Prepares .carry/ (ignored by git) for the device machine: the release binary, Debian's bwa
# binary, and the test data, compressed. Then run `bash scripts/gpu-check.sh` there with
# carry [".carry"] (see docs/gpu.md).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/get-data.sh >/dev/null
cargo build --release --quiet
rm -rf .carry && mkdir -p .carry/data
cp target/release/bcuda .carry/ && strip .carry/bcuda
tmp=$(mktemp -d)
(cd "$tmp" && apt-get download bwa >/dev/null 2>&1 && dpkg -x bwa_*.deb root)
cp "$tmp"/root/usr/bin/bwa .carry/
for g in lambda ecoli536; do
    gzip -c data/$g.fa > .carry/data/$g.fa.gz
    gzip -c data/${g}_art.fq > .carry/data/${g}_art.fq.gz
done
for L in 36 76 150 250; do python3 scripts/sim-reads.py data/ecoli536.fa $L 20000 $L | gzip > .carry/data/sim$L.fq.gz; done
cp scripts/synth-genome.py scripts/sim-reads.py .carry/
du -sh .carry
