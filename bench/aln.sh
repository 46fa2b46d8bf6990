#!/usr/bin/env bash
# CPU aln benchmark: reads/s of `bcuda aln --cpu` vs `bwa aln` at the same thread count on the
# same reads (E. coli 536 ART HS25 100 bp), side by side in one run.
#   bench/aln.sh [THREADS...]      (default: 1 and all cores)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/get-data.sh >/dev/null
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp data/ecoli536.fa "$work/" && bwa index "$work/ecoli536.fa" 2>/dev/null
reads=data/ecoli536_art.fq
n=$(( $(wc -l < $reads) / 4 ))
threads=("$@"); [ ${#threads[@]} -gt 0 ] || threads=(1 "$(nproc)")
secs() { local t0 t1; t0=$(date +%s.%N); "$@" > "$work/out.sai" 2>/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
echo "| threads | reads | bcuda s | bcuda reads/s | bwa s | bwa reads/s | bcuda/bwa | same .sai |"
echo "|---|---|---|---|---|---|---|---|"
for t in "${threads[@]}"; do
    b=$(secs target/release/bcuda aln --cpu --quiet -t "$t" "$work/ecoli536.fa" $reads); cp "$work/out.sai" "$work/b.sai"
    w=$(secs bwa aln -t "$t" "$work/ecoli536.fa" $reads)
    same=no; cmp -s "$work/b.sai" "$work/out.sai" && same=yes
    printf "| %s | %s | %.2f | %.0f | %.2f | %.0f | %.2f | %s |\n" "$t" "$n" "$b" "$(echo "$n / $b" | bc -l)" "$w" "$(echo "$n / $w" | bc -l)" "$(echo "$w / $b" | bc -l)" "$same"
done
