#!/usr/bin/env bash
# Runs on the device machine: a seeded synthetic genome of SIZE Mbp (default 500) indexed by
# bcuda there, 1M simulated 100 bp reads; exact_match alone, GPU vs CPU identity on the first
# 100k reads, and whole aln vs bwa aln -t 16. Needs .carry/ from scripts/gpu-bundle.sh.
. "$(dirname "$0")/device-env.sh"
size=${1:-500}
log() { echo "$@" | tee -a "$OUT/gpu-large.log"; }
secs() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 2))" "$@"; }
t0=$(date +%s.%N); python3 $C/synth-genome.py "$size" 1 > $W/synth.fa; t1=$(date +%s.%N)
log "genome: ${size} Mbp generated in $(secs $t0 $t1) s"
/usr/bin/time -f "%e s, peak %M KiB" -o $W/itime $B index -q --sort-memory "${SORT_GB:-2}" $W/synth.fa
log "bcuda index (16 cores, --sort-memory ${SORT_GB:-2}): $(cat $W/itime)"
t0=$(date +%s.%N); python3 $C/sim-reads.py $W/synth.fa 100 1000000 7 > $W/reads.fq; t1=$(date +%s.%N)
log "1M reads simulated in $(secs $t0 $t1) s"
$B gpu-bench $W/synth.fa $W/reads.fq 2>&1 | tee -a "$OUT/gpu-large.log"
head -400000 $W/reads.fq > $W/r100k.fq
$B aln --cpu --quiet -t 16 $W/synth.fa $W/r100k.fq > $W/cpu.sai
$B aln --gpu --quiet -t 16 $W/synth.fa $W/r100k.fq > $W/gpu.sai
cmp -s $W/cpu.sai $W/gpu.sai && log "100k reads: GPU .sai = CPU .sai" || log "100k reads: GPU .sai DIFFERS from CPU"
t0=$(date +%s.%N); $B aln --gpu -t 16 $W/synth.fa $W/reads.fq > $W/gpu_all.sai 2> $W/summary; t1=$(date +%s.%N)
tee -a "$OUT/gpu-large.log" < $W/summary
$C/bwa aln -t 16 $W/synth.fa $W/reads.fq > $W/bwa_all.sai 2>/dev/null; t2=$(date +%s.%N)
log "whole aln, 1M reads: bcuda --gpu $(secs $t0 $t1) s, bwa aln -t 16 $(secs $t1 $t2) s"
cmp -s <(tail -c +69 $W/gpu_all.sai) <(tail -c +69 $W/bwa_all.sai) && log "1M reads: bcuda --gpu .sai records = bwa's" || log "1M reads: bcuda .sai records differ from bwa's"
