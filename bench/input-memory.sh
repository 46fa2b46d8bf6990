#!/usr/bin/env bash
# Peak host memory of `bcuda aln --cpu` against input size: READS.fq repeated COPIES times
# through standard input (no disk space needed), aligned to INDEX; prints reads, peak resident
# memory (/usr/bin/time -v) and wall time for each count of copies.
# Usage: bash bench/input-memory.sh INDEX READS.fq [COPIES...]   (default copies: 4 16)
set -euo pipefail
index=$1 reads=$2
shift 2
bin=${BCUDA:-target/release/bcuda}
n=$(( $(wc -l < "$reads") / 4 ))
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf 'reads\tmax_rss_mb\twall\n'
for copies in "${@:-4 16}"; do
  for copies1 in $copies; do
    for _ in $(seq "$copies1"); do cat "$reads"; done | /usr/bin/time -v "$bin" aln --cpu --quiet -t 2 "$index" - 2> "$log" > /dev/null
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$log")
    wall=$(awk -F': ' '/Elapsed/ {print $2}' "$log")
    printf '%s\t%.0f\t%s\n' $((copies1 * n)) "$(echo "$rss / 1024" | bc -l)" "$wall"
  done
done
