#!/usr/bin/env bash
# The README's first command: build bcuda and run index -> aln -> samse on the small embedded
# example in testdata/ (42 kbp reference with N and IUPAC codes, 2000 reads of 100 bp).
# Output: demo-out/demo.sam. Uses the GPU when one is present, else the CPU path.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/bcuda
out=demo-out
rm -rf "$out" && mkdir -p "$out"
cp testdata/demo_ref.fa "$out/"
"$bin" index "$out/demo_ref.fa"
"$bin" aln "$out/demo_ref.fa" testdata/demo.fq > "$out/demo.sai"
"$bin" samse "$out/demo_ref.fa" "$out/demo.sai" testdata/demo.fq > "$out/demo.sam"
total=$(grep -vc '^@' "$out/demo.sam")
mapped=$(awk '!/^@/ && int($2 / 4) % 2 == 0' "$out/demo.sam" | wc -l)
echo "demo: $total reads aligned, $mapped mapped; SAM in $out/demo.sam"
