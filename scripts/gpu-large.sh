#!/usr/bin/env bash
# Runs on the device machine: a seeded synthetic genome of SIZE Mbp (default 500) indexed by
# bcuda there (--sort-memory SORT_GB GiB, default 2) while 1M 100 bp reads are simulated from
# it; then exact_match alone, GPU vs CPU identity on the first 100k reads, and whole aln vs
# bwa aln -t 16 (on bcuda's index) with the .sai records compared. Needs .carry/ from
# scripts/gpu-bundle.sh. Long runs: start it with setsid in the background and poll
# $OUT/gpu-large.log (it ends with a line "done").
. "$(dirname "$0")/device-env.sh"
size=${1:-500}
sort_gb=${SORT_GB:-2}
log() { echo "$@" | tee -a "$OUT/gpu-large.log"; }
secs() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$@"; }
t0=$(date +%s.%N); python3 $C/synth-genome.py "$size" 1 > $W/synth.fa; t1=$(date +%s.%N)
log "genome: ${size} Mbp generated in $(secs $t0 $t1) s"
# WAIT_FOR=FILE: hold the 16-core part until FILE exists (another benchmark is timing).
while [ -n "${WAIT_FOR:-}" ] && [ ! -e "$WAIT_FOR" ]; do sleep 1; done
python3 $C/sim-reads.py $W/synth.fa 100 1000000 7 > $W/reads.fq &
sim=$!
/usr/bin/time -f "%e s, peak %M KiB" -o $W/itime $B index -q --sort-memory "$sort_gb" $W/synth.fa
log "bcuda index ($(nproc) cores, --sort-memory $sort_gb): $(cat $W/itime)"
wait $sim
log "1M reads simulated"
$DEV gpu-bench $W/synth.fa $W/reads.fq 2>&1 | tee -a "$OUT/gpu-large.log"
head -400000 $W/reads.fq > $W/r100k.fq
$B aln --cpu --quiet -t 16 $W/synth.fa $W/r100k.fq > $W/cpu.sai
$B aln --gpu --quiet -t 16 $W/synth.fa $W/r100k.fq > $W/gpu.sai
cmp -s $W/cpu.sai $W/gpu.sai && log "100k reads: GPU .sai = CPU .sai" || log "100k reads: GPU .sai DIFFERS from CPU"
# bcuda twice (run to run spread), then bwa.
t0=$(date +%s.%N); $B aln --gpu -t 16 $W/synth.fa $W/reads.fq > $W/gpu_all.sai 2> $W/summary; t1=$(date +%s.%N)
tee -a "$OUT/gpu-large.log" < $W/summary
t2=$(date +%s.%N); $B aln --gpu -t 16 $W/synth.fa $W/reads.fq > $W/gpu_all2.sai 2> $W/summary2; t3=$(date +%s.%N)
tee -a "$OUT/gpu-large.log" < $W/summary2
$C/bwa aln -t 16 $W/synth.fa $W/reads.fq > $W/bwa_all.sai 2>/dev/null; t4=$(date +%s.%N)
log "whole aln, 1M reads: bcuda --gpu $(secs $t0 $t1) s and $(secs $t2 $t3) s, bwa aln -t 16 $(secs $t3 $t4) s"
cmp -s <(tail -c +69 $W/gpu_all.sai) <(tail -c +69 $W/bwa_all.sai) && log "1M reads: bcuda --gpu .sai records = bwa's" || log "1M reads: bcuda .sai records differ from bwa's"
cmp -s $W/gpu_all.sai $W/gpu_all2.sai || log "the two bcuda runs' .sai differ"
log "done"
