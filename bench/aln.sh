#!/usr/bin/env bash
# CPU benchmarks against bwa on E. coli 536, side by side in one run, as a table.
#   bench/aln.sh [THREADS...]          aln: reads/s of `bcuda aln --cpu` vs `bwa aln` at the same
#                                      thread count (ART HS25 100 bp reads)
#   bench/aln.sh --sampe [THREADS...]  sampe: pairs/s of `bcuda sampe -t T` vs `bwa sampe` (which
#                                      has one thread) on 200,000 dwgsim pairs (insert 500 +- 50,
#                                      5% random pairs, so mate rescue runs); same SAM records?
# THREADS default: 1 and all cores.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=aln; [ "${1:-}" = --sampe ] && { mode=sampe; shift; }
./scripts/get-data.sh >/dev/null
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp data/ecoli536.fa "$work/" && bwa index "$work/ecoli536.fa" 2>/dev/null
threads=("$@"); [ ${#threads[@]} -gt 0 ] || threads=(1 "$(nproc)")
secs() { local t0 t1; t0=$(date +%s.%N); "$@" > "$work/out.sai" 2>/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }

if [ "$mode" = sampe ]; then
    dwgsim -z 3 -N 200000 -1 100 -2 100 -d 500 -s 50 -y 0.05 -r 0.002 -o 1 "$work/ecoli536.fa" "$work/pe" >/dev/null 2>&1
    for e in 1 2; do
        gzip -dc "$work/pe.bwa.read$e.fastq.gz" > "$work/pe_$e.fq"
        target/release/bcuda aln --cpu --quiet "$work/ecoli536.fa" "$work/pe_$e.fq" > "$work/pe_$e.sai"
    done
    args=("$work/ecoli536.fa" "$work/pe_1.sai" "$work/pe_2.sai" "$work/pe_1.fq" "$work/pe_2.fq")
    n=200000
    # Wall and CPU (user + system) seconds: on a shared machine CPU time is the steadier one.
    timed() { /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" > "$work/out.sam" 2>/dev/null; awk '{printf "%s %.2f\n", $1, $2 + $3}' "$work/time"; }
    read -r w wc < <(timed bwa sampe "${args[@]}"); grep -v '^@PG' "$work/out.sam" > "$work/bwa.sam"
    echo "| threads | pairs | bcuda s | bcuda CPU s | bcuda pairs/s | bwa s (1 thread) | bwa CPU s | bwa pairs/s | bcuda/bwa (wall) | same SAM |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for t in "${threads[@]}"; do
        read -r b bc < <(timed target/release/bcuda sampe --quiet -t "$t" "${args[@]}")
        same=no; grep -v '^@PG' "$work/out.sam" | cmp -s - "$work/bwa.sam" && same=yes
        printf "| %s | %s | %.2f | %.2f | %.0f | %.2f | %.2f | %.0f | %.2f | %s |\n" "$t" "$n" "$b" "$bc" "$(echo "$n / $b" | bc -l)" "$w" "$wc" "$(echo "$n / $w" | bc -l)" "$(echo "$w / $b" | bc -l)" "$same"
    done
    exit 0
fi

reads=data/ecoli536_art.fq
n=$(( $(wc -l < $reads) / 4 ))
echo "| threads | reads | bcuda s | bcuda reads/s | bwa s | bwa reads/s | bcuda/bwa | same .sai |"
echo "|---|---|---|---|---|---|---|---|"
for t in "${threads[@]}"; do
    b=$(secs target/release/bcuda aln --cpu --quiet -t "$t" "$work/ecoli536.fa" $reads); cp "$work/out.sai" "$work/b.sai"
    w=$(secs bwa aln -t "$t" "$work/ecoli536.fa" $reads)
    same=no; cmp -s "$work/b.sai" "$work/out.sai" && same=yes
    printf "| %s | %s | %.2f | %.0f | %.2f | %.0f | %.2f | %s |\n" "$t" "$n" "$b" "$(echo "$n / $b" | bc -l)" "$w" "$(echo "$n / $w" | bc -l)" "$(echo "$w / $b" | bc -l)" "$same"
done
