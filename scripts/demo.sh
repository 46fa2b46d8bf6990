#!/usr/bin/env bash
# The README's first command: build bcuda and run index -> aln -> samse on the small embedded
# example in testdata/ (42 kbp reference with N and IUPAC codes, 2000 reads of 100 bp), then
# aln -> sampe on its 500 read pairs (testdata/demo_1.fq, demo_2.fq).
# Output: demo-out/demo.sam, demo-out/demo_pe.sam, demo-out/demo_pe.sorted.bam (with .bai). Uses the GPU when one is present, else the CPU path.
set -euo pipefail
cd "$(dirname "$0")/.."
# ISA-L's gzip decoder is built from its sources, with nasm and autotools; without them the
# build takes zlib-rs's (the same answers, a fifth slower on gzip'd reads).
features=()
for tool in nasm autoreconf libtoolize make; do
    command -v "$tool" > /dev/null && continue
    echo "demo: $tool not found, so gzip is inflated by zlib-rs, not ISA-L (apt-get install nasm autoconf automake libtool make)" >&2
    features=(--no-default-features)
    break
done
cargo build --release --quiet "${features[@]}"
bin=target/release/bcuda
out=demo-out
rm -rf "$out" && mkdir -p "$out"
cp testdata/demo_ref.fa "$out/"
# --not-default: the demo leaves the default index (bcuda index's record of the last one built) as it was.
"$bin" index --not-default "$out/demo_ref.fa"
"$bin" aln "$out/demo_ref.fa" testdata/demo.fq > "$out/demo.sai"
"$bin" samse "$out/demo_ref.fa" "$out/demo.sai" testdata/demo.fq > "$out/demo.sam"
total=$(grep -vc '^@' "$out/demo.sam")
mapped=$(awk '!/^@/ && int($2 / 4) % 2 == 0' "$out/demo.sam" | wc -l)
echo "demo: $total reads aligned, $mapped mapped; SAM in $out/demo.sam"

for e in 1 2; do "$bin" aln "$out/demo_ref.fa" "testdata/demo_$e.fq" > "$out/demo_$e.sai"; done
"$bin" sampe "$out/demo_ref.fa" "$out/demo_1.sai" "$out/demo_2.sai" testdata/demo_1.fq testdata/demo_2.fq > "$out/demo_pe.sam"
pairs=$(( $(grep -vc '^@' "$out/demo_pe.sam") / 2 ))
proper=$(awk '!/^@/ && int($2 / 2) % 2 == 1 && int($2 / 64) % 2 == 1' "$out/demo_pe.sam" | wc -l)
rescued=$(grep -c 'XT:A:M' "$out/demo_pe.sam" || true)
echo "demo: $pairs pairs aligned, $proper properly paired, $rescued mates found by Smith-Waterman; SAM in $out/demo_pe.sam"

# The same pairs in one command, to a coordinate-sorted, indexed BAM with a read group.
"$bin" map --quiet --sort -R '@RG\tID:demo\tSM:demo' -o "$out/demo_pe.sorted.bam" "$out/demo_ref.fa" testdata/demo_1.fq testdata/demo_2.fq
echo "demo: map wrote $out/demo_pe.sorted.bam and its index $out/demo_pe.sorted.bam.bai"
