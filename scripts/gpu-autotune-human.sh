#!/usr/bin/env bash
# Runs on the device machine (with .carry/ from scripts/gpu-bundle.sh): issue 13's acceptance
# run. The seeded human-like genome of bench/human-like.sh (SIZE_MBP Mbp), indexed; dwgsim
# reads as there; `bcuda autotune --reads` on a sample of them (3 batches: 2 train, 1 held
# out) within BUDGET, evolving exact_match and the inexact kernels together; then
# `bcuda aln --gpu` with the tuned kernels and with --no-tuned, alternately, twice each, on
# HELD_OUT_READS other reads (never seen by autotune), timed end to end, their .sai compared.
# Report, plot, winner and log in $OUT; the log ($OUT/gpu-autotune-human.log) ends with
# "done", so scripts/gpu-long.sh can run it:
#   bash scripts/gpu-long.sh start scripts/gpu-autotune-human.sh 1000 12m; bash scripts/gpu-long.sh wait 585 (repeat)
#   bash scripts/gpu-autotune-human.sh [SIZE_MBP=1000] [BUDGET=12m] [HELD_OUT_READS=1000000]
# SWEEP (see the end): other switch settings timed on the same held-out reads.
# A session has 30 minutes of device time in all, and a machine goes back after 30 minutes
# held: the budget leaves room for the machine's start, the data and the held-out runs.
. "$(dirname "$0")/device-env.sh"
size=${1:-1000}
budget=${2:-12m}
held=${3:-1000000}
sample=$((3 * 159744))
export LD_LIBRARY_PATH=$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
log() { echo "$@" | tee -a "$OUT/gpu-autotune-human.log"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }
log "autotune on the human-like benchmark: ${size} Mbp, budget $budget, commit $(cat $C/commit 2>/dev/null || echo unknown)"
$DEV synth-genome --size-mbp "$size" --seed 1 --human-like > $W/genome.fa 2> $W/synth.log
while [ -n "${WAIT_FOR:-}" ] && [ ! -e "$WAIT_FOR" ]; do sleep 1; done
n=$((sample + held))
jobs=16
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
# Alternately, twice each: the host's state (page cache, clocks) favours neither.
for round in 1 2; do
    for run in tuned plain; do
        flag=; [ $run = plain ] && flag=--no-tuned
        t0=$(now)
        $B aln --gpu $flag -t 16 $W/genome.fa $W/held.fq > $W/$run$round.sai 2> $W/$run$round.err
        log "aln --gpu $flag on the held-out reads (round $round): $(secs $t0 $(now)) s"
        grep -i "kernels:\|tuned\|busy" $W/$run$round.err | tee -a "$OUT/gpu-autotune-human.log"
    done
done
same=yes
for f in tuned1 tuned2 plain2; do cmp -s $W/plain1.sai $W/$f.sai || same=no; done
[ $same = yes ] && log "aln .sai with the tuned kernels = without (both rounds)" || log "aln .sai DIFFERS with the tuned kernels"
# SWEEP="a=1;b=2 c=0": aln --no-tuned once per setting of the inexact kernels' switches on the
# same held-out reads (BCUDA_TEST_INEXACT_SWITCHES), beside the runs above.
if [ -n "${SWEEP:-}" ]; then
    IFS=';' read -ra settings <<< "$SWEEP"
    for sw in "${settings[@]}"; do
        t0=$(now)
        BCUDA_TEST_INEXACT_SWITCHES=$sw $B aln --gpu --no-tuned -t 16 $W/genome.fa $W/held.fq > $W/sweep.sai 2> $W/sweep.err
        s=$(secs $t0 $(now))
        cmp -s $W/plain1.sai $W/sweep.sai && same=yes || same=no
        log "sweep [$sw]: $s s, .sai = plain's: $same"
        grep -i "kernels:\|busy" $W/sweep.err | tee -a "$OUT/gpu-autotune-human.log"
    done
fi
cp ~/.cache/bcuda/tuned/*.json "$OUT"/ 2>/dev/null
log "done"
