#!/usr/bin/env bash
# Runs on the CUDA host: a small real autotune run on the E. coli index with the ART
# reads (first batch evolves, second validates), then aln with and without the tuned kernel
# (the .sai must not change). Needs bundle/ from scripts/gpu-bundle.sh.
#   bash scripts/gpu-autotune.sh [POP] [GENS] [BUDGET]
. "$(dirname "$0")/device-env.sh"
gzip -dc $C/data/ecoli536.fa.gz > $W/ecoli536.fa && $B index -q $W/ecoli536.fa
for i in 1 2 3 4; do gzip -dc $C/data/ecoli536_art.fq.gz; done > $W/reads.fq
$B autotune --index $W/ecoli536.fa --reads $W/reads.fq --pop "${1:-40}" --gens "${2:-5}" --budget "${3:-5m}" --batch-size 159744 --report "$OUT" 2>&1 | tee "$OUT/autotune.log"
$B aln --gpu -t 16 $W/ecoli536.fa $W/reads.fq > $W/tuned.sai 2> $W/tuned.err; cat $W/tuned.err | tee -a "$OUT/autotune.log"
$B aln --gpu --no-tuned -t 16 --quiet $W/ecoli536.fa $W/reads.fq > $W/plain.sai
cmp -s $W/tuned.sai $W/plain.sai && echo "aln .sai with the tuned kernel = without" | tee -a "$OUT/autotune.log" || echo "aln .sai DIFFERS with the tuned kernel" | tee -a "$OUT/autotune.log"
ls ~/.cache/bcuda/tuned/ 2>/dev/null | tee -a "$OUT/autotune.log"
