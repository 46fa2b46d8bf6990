#!/usr/bin/env bash
# How repetitive a genome looks to bwa aln: simulate reads (dwgsim with an error ramp,
# indels and 2 % random reads; ART HS25), align with bwa aln + samse, and print per read
# source the fraction of reads aligned, with mapping quality 0, with more than one best
# hit (X0 > 1), and with any other hit at most one difference worse (X0 + X1 > 1). Human: roughly 5-15 % of 100 bp reads multi-map.
#   bench/repeat-check.sh GENOME.fa [N_READS=20000] [THREADS=2]
# Indexes GENOME.fa with target/release/bcuda when it has no index yet.
set -euo pipefail
ref=$1
n=${2:-20000}
threads=${3:-2}
bcuda=$(dirname "$0")/../target/release/bcuda
[ -e "$ref.bwt" ] || "$bcuda" index -q "$ref"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
dwgsim -o 1 -e 0.005-0.015 -E 0.005-0.015 -r 0.001 -R 0.1 -y 0.02 -1 100 -2 100 -N "$n" -z 7 "$ref" "$w/dw" > /dev/null 2>&1
zcat -f "$w"/dw.bwa.read1.fastq* > "$w/dwgsim.fq"
mbp=$(awk '/^>/ {next} {n += length($0)} END {printf "%.6f", n / 1e6}' "$ref")
art_illumina -ss HS25 -i "$ref" -l 100 -f "$(python3 -c "print($n * 100 / ($mbp * 1e6))")" -o "$w/art" -rs 7 -na -q > /dev/null 2>&1
printf "reads\tn\taligned\tmapq0\tX0>1\tX0+X1>1\n"
for src in dwgsim art; do
    fq=$w/$src.fq
    [ "$src" = art ] && fq=$w/art.fq
    bwa aln -t "$threads" "$ref" "$fq" > "$w/$src.sai" 2> /dev/null
    bwa samse "$ref" "$w/$src.sai" "$fq" 2> /dev/null | awk -v src=$src '
        /^@/ {next}
        {n++; if (int($2 / 4) % 2) next; aligned++; if ($5 == 0) q0++
         x0 = 0; x1 = 0
         for (i = 12; i <= NF; i++) {if ($i ~ /^X0:i:/) x0 = substr($i, 6) + 0; if ($i ~ /^X1:i:/) x1 = substr($i, 6) + 0}
         if (x0 > 1) multi++; if (x0 + x1 > 1) near++}
        END {printf "%s\t%d\t%.2f%%\t%.2f%%\t%.2f%%\t%.2f%%\n", src, n, 100 * aligned / n, 100 * q0 / n, 100 * multi / n, 100 * near / n}'
done
