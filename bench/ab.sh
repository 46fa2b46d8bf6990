#!/usr/bin/env bash
# A/B of kernel builds and switches on a CUDA host with bundle/ (scripts/gpu-bundle.sh; a second
# build copied in as bundle/bcuda-base, or any as bundle/bcuda-NAME): a human-like genome of SIZE Mbp (default 1000), READS
# dwgsim 100 bp reads and as many ancient-DNA reads (examples/sim_adna.rs), then
#   1. the GPU's .sai against the CPU's on the first 100k reads of each regime, for each of CHECK
#      (switch sets, BCUDA_TEST_INEXACT_SWITCHES syntax);
#   2. every config of CONFIGS ("name:build:switches", build `new` = bundle/bcuda, any other
#      NAME = bundle/bcuda-NAME), REPS times each, both regimes: wall, GPU busy and each pass's time;
#   3. each config's .sai against the first config's;
#   4. with GPU_CHECK=1, scripts/gpu-check.sh (SKIP_SWITCHES=1).
# Log: $OUT/ab.log, ending "done". Long: run it through scripts/gpu-long.sh start bench/ab.sh.
#   CONFIGS="base:base: new:new:" bash bench/ab.sh
set -uo pipefail
R=$PWD; C=$R/bundle; B=$C/bcuda; export LD_LIBRARY_PATH=$C/lib
OUT=${OUT:-$R/gpu-out}; mkdir -p "$OUT"; W=${W:-/tmp/ab}; mkdir -p $W; cd $W
SIZE=${SIZE:-1000}; READS=${READS:-4000000}; REPS=${REPS:-2}
CONFIGS=${CONFIGS:-"base:base: new:new:"}; CHECK=${CHECK:-"root_chain=1"}
log() { echo "$@" | tee -a $OUT/ab.log; }
now() { date +%s.%N; }
el() { awk -v a=$1 -v b=$2 'BEGIN{printf "%.2f", b-a}'; }
log "$(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader); commit $(cat $C/commit); $(date -u); SIZE=$SIZE READS=$READS CONFIGS=$CONFIGS"
if [ ! -s genome.fa.sa ]; then
    $C/bcuda-dev synth-genome --size-mbp $SIZE --seed 1 --human-like > genome.fa 2> /dev/null
    per=$((READS / 16))
    ( for j in $(seq 0 15); do $C/dwgsim -o 1 -e 0.005-0.015 -E 0.005-0.015 -r 0.001 -R 0.1 -y 0.02 -1 100 -2 100 -N $per -z $((7 + j)) genome.fa d$j > /dev/null 2>&1 & done; wait ) &
    $C/sim_adna genome.fa $READS 7 > adna.fq &
    t0=$(now); $B index -q --sort-memory 6 genome.fa; log "index $(el $t0 $(now)) s"
    wait
    for j in $(seq 0 15); do zcat -f d$j.bwa.read1.fastq*; done > reads.fq
fi
log "reads: $(( $(wc -l < reads.fq) / 4 )) 100bp, $(( $(wc -l < adna.fq) / 4 )) adna"
opts() { [ $1 = adna ] && echo "-l 1024 -n 0.01 -o 2"; }
file() { [ $1 = adna ] && echo adna.fq || echo reads.fq; }
for reg in 100bp adna; do
    head -400000 $(file $reg) > c_$reg.fq
    $B aln --cpu --quiet -t 16 $(opts $reg) genome.fa c_$reg.fq > cpu_$reg.sai
    for sw in $CHECK; do
        BCUDA_TEST_INEXACT_SWITCHES=$sw $B aln --gpu --quiet -t 16 $(opts $reg) genome.fa c_$reg.fq > gpu.sai 2> gpu.err
        cmp -s cpu_$reg.sai gpu.sai && log "SAME $reg 100k $sw" || log "DIFF $reg 100k $sw $(tail -2 gpu.err)"
    done
done
for rep in $(seq 1 $REPS); do for cfg in $CONFIGS; do for reg in 100bp adna; do
    IFS=: read -r name build sw <<< "$cfg"
    X=$B; [ "$build" = new ] || X=$C/bcuda-$build
    t0=$(now); BCUDA_TEST_INEXACT_SWITCHES=$sw $X aln --gpu -t 16 $(opts $reg) genome.fa $(file $reg) > s_${reg}_$name.sai 2> s_${reg}_$name.err; t1=$(now)
    log "$reg $name ($build${sw:+ $sw}) rep $rep: wall $(el $t0 $t1) s; $(grep -o 'busy [0-9.]* s, kernels [0-9.]* s' s_${reg}_$name.err); $(grep -o 'pass [123] [0-9.]* ms on [0-9]* reads' s_${reg}_$name.err | tr '\n' ' '); sai $(md5sum < s_${reg}_$name.sai | cut -c1-8)"
done; done; done
first=${CONFIGS%% *}; first=${first%%:*}
for reg in 100bp adna; do for cfg in $CONFIGS; do name=${cfg%%:*}
    cmp -s s_${reg}_$first.sai s_${reg}_$name.sai && log "$reg $name: .sai = $first's" || log "$reg $name: .sai DIFFERS from $first's"
done; done
if [ -n "${GPU_CHECK:-}" ]; then
    (cd $R && OUT=$OUT SKIP_SWITCHES=1 bash scripts/gpu-check.sh > /dev/null 2>&1)
    log "gpu-check: $(grep -c '^SAME' $OUT/gpu-check.log) SAME, $(grep -cE '^(DIFF|FAIL)' $OUT/gpu-check.log) DIFF or FAIL"
fi
log done
