#!/usr/bin/env bash
# Runs on the device machine (with .carry/ from scripts/gpu-bundle.sh): issue 13's acceptance
# run. A seeded human-like genome of SIZE_MBP Mbp, indexed; dwgsim reads as in
# bench/human-like.sh; `bcuda autotune --reads` on a sample of them (3 batches: 2 train, 1
# held out) within BUDGET, evolving exact_match and the inexact kernels together; then
# `bcuda aln --gpu` with the tuned kernels and with --no-tuned on other reads (never seen by
# autotune), timed end to end, their .sai compared. Report, plot, winner and log in $OUT; the
# log ($OUT/gpu-autotune-human.log) ends with "done", so scripts/gpu-long.sh can run it:
#   bash scripts/gpu-long.sh start scripts/gpu-autotune-human.sh 100 24m; bash scripts/gpu-long.sh wait 585 (repeat)
#   bash scripts/gpu-autotune-human.sh [SIZE_MBP=100] [BUDGET=24m] [HELD_OUT_READS=500000]
# A session has 30 minutes of device time in all: 24 for the search leaves room for the
# machine's start, the data and the held-out runs (the issue asks for a budget within 30).
. "$(dirname "$0")/device-env.sh"
size=${1:-100}
budget=${2:-24m}
held=${3:-500000}
sample=$((3 * 159744))
export LD_LIBRARY_PATH=$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
log() { echo "$@" | tee -a "$OUT/gpu-autotune-human.log"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }
log "autotune on the human-like benchmark: ${size} Mbp, budget $budget, commit $(cat $C/commit 2>/dev/null || echo unknown)"
$B synth-genome --size-mbp "$size" --seed 1 --human-like > $W/genome.fa 2> $W/synth.log
while [ -n "${WAIT_FOR:-}" ] && [ ! -e "$WAIT_FOR" ]; do sleep 1; done
n=$((sample + held))
jobs=8
for j in $(seq 0 $((jobs - 1))); do
    $C/dwgsim -o 1 -e 0.005-0.015 -E 0.005-0.015 -r 0.001 -R 0.1 -y 0.02 -1 100 -2 100 -N $((n / jobs + 1)) -z $((7 + j)) \
        $W/genome.fa $W/dwgsim$j > $W/dwgsim$j.log 2>&1 &
done
$B index -q --sort-memory "${SORT_GB:-8}" $W/genome.fa || { log "index failed"; exit 1; }
wait
for j in $(seq 0 $((jobs - 1))); do zcat -f $W/dwgsim$j.bwa.read1.fastq*; done > $W/all.fq
head -n $((4 * sample)) $W/all.fq > $W/sample.fq
tail -n +$((4 * sample + 1)) $W/all.fq | head -n $((4 * held)) > $W/held.fq
log "$(( $(wc -l < $W/sample.fq) / 4 )) sample reads, $(( $(wc -l < $W/held.fq) / 4 )) held-out reads"
t0=$(now)
$B autotune --index $W/genome.fa --reads $W/sample.fq --budget "$budget" --report "$OUT" 2>&1 | tee -a "$OUT/gpu-autotune-human.log"
log "autotune took $(secs $t0 $(now)) s"
for run in tuned plain; do
    flag=; [ $run = plain ] && flag=--no-tuned
    t0=$(now)
    $B aln --gpu $flag -t 16 $W/genome.fa $W/held.fq > $W/$run.sai 2> $W/$run.err
    log "aln --gpu $flag on the held-out reads: $(secs $t0 $(now)) s"
    grep -i "pass\|exact\|tuned" $W/$run.err | tee -a "$OUT/gpu-autotune-human.log"
done
cmp -s $W/tuned.sai $W/plain.sai && log "aln .sai with the tuned kernels = without" || log "aln .sai DIFFERS with the tuned kernels"
cp ~/.cache/bcuda/tuned/*.json "$OUT"/ 2>/dev/null
log "done"
