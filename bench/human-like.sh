#!/usr/bin/env bash
# Runs on the CUDA host (with bundle/ from scripts/gpu-bundle.sh): the human-like
# benchmark of issue 11.
#   bash bench/human-like.sh SIZE_MBP [N_READS=1000000]
# A seeded human-like genome of SIZE_MBP Mbp (`bcuda-dev synth-genome --human-like`), indexed by
# bcuda (--sort-memory SORT_GB GiB, default 2) while N_READS dwgsim 100 bp reads are simulated
# (error ramp 0.5-1.5 %, indels, 2 % random reads; single-end: read 1). Then bcuda aln (twice)
# and bwa aln -t 16 (BWA_RUNS times, default 2; the fastest run of each counts) on the same
# index and reads, the .sai files compared, and one row appended to $OUT/human-like-h100.tsv.
# Log: $OUT/human-like.log, ending with a line "done".
# Env: BCUDA_MODE (default --gpu; --cpu to test the script on a machine without a GPU, which
# writes human-like-cpu.tsv instead), THREADS (default 16), SORT_GB, COMMIT (default: the
# commit gpu-bundle.sh wrote into bundle/commit), WAIT_FOR=FILE (hold the 16-core part until
# FILE exists; scripts/gpu-long.sh uses it), GPUS="1 2" (then also bcuda aln --gpus N, twice
# for each N, one row each in $OUT/multi-gpu.tsv: steady rate and scaling against the first N),
# SWEEP, ENV_SWEEP, BATCH_SWEEP, VARIANT, NCU, KEEP_W (see the end) and REUSE_INDEX (below).
# REGIME: 100bp (default: the dwgsim reads above, bwa's default options) or adna: reads of
# examples/sim_adna.rs (30-90 bases, deamination at the ends, 5 % random; seed 7), and both
# aligners with ancient DNA's options, -l 1024 -n 0.01 -o 2 (nf-core/eager's).
# Steady state: with more than BWA_READS reads (default 1,000,000), bwa aligns only the first
# BWA_READS (its time per 1M is what is compared) and bcuda aligns them too, for the identity
# check; every run appends a row to $OUT/steady-h100.tsv (genome_mbp regime reads bcuda_s
# gpu_busy_s gpu_reads_per_s e2e_reads_per_s bwa_t16_s_per_1M sai_identical commit), GPU busy
# from the summary of the faster of bcuda's two runs over all the reads.
. "$(dirname "$0")/../scripts/device-env.sh"
size=$1
reads=${2:-1000000}
sort_gb=${SORT_GB:-2}
mode=${BCUDA_MODE:---gpu}
regime=${REGIME:-100bp}
A=; [ "$regime" = adna ] && A="-l 1024 -n 0.01 -o 2"
bwa_reads=${BWA_READS:-1000000}
[ "$bwa_reads" -lt "$reads" ] || bwa_reads=$reads
t=${THREADS:-16}
commit=${COMMIT:-$(cat $C/commit 2>/dev/null || echo unknown)}
tsv=$OUT/human-like-h100.tsv
[ "$mode" = --gpu ] || tsv=$OUT/human-like${mode#-}.tsv
export LD_LIBRARY_PATH=$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
log() { echo "$@" | tee -a "$OUT/human-like.log"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }
# A figure from bcuda aln's stderr summary (NA when the summary has none, e.g. on the CPU).
from_summary() { sed -n "s/.*$1.*/\\1/p" "$2" | head -1 | grep . || echo NA; }
# Reads searched again with larger stacks: those of the inexact passes after the first
# ("pass 2 ... ms on N reads"), or the older summary's "retrying N reads".
retried_reads() {
    grep -o 'pass [0-9]* [0-9.]* ms on [0-9]* reads' "$1" | awk '{n++} $2 > 1 {s += $6} END {if (n) print s + 0}' | grep . \
        || from_summary 'retrying \([0-9][0-9]*\) reads' "$1"
}

# The rate in the middle half of a run, from its timeline: a least-squares line through the
# times at which its middle half of batches (from a quarter of them to three quarters) were
# written, against their number; one full batch (262,144 reads) over its slope. It leaves out
# the pipeline's fill and drain and the GPUs' release at exit, which reads / (wall - start-up)
# keeps, and unlike two end points it does not depend on where in a round of the GPUs the
# quarter marks fall. NA under 12 batches (3M reads), where the middle is a few batches that
# finish in pairs (two in flight per GPU) and the last one is short.
middle_rate() {
    grep -o 'timeline *[0-9.]* s  batch *[0-9]*  written' "$1" | awk '{t[$5] = $2; n++}
        END {
            a = int(n / 4); b = int(3 * n / 4)
            for (i = a; i <= b; i++) {m++; sx += i; sy += t[i]; sxx += i * i; sxy += i * t[i]}
            d = m * sxx - sx * sx
            if (n < 12 || d <= 0 || m * sxy - sx * sy <= 0) print "NA"
            else printf "%.0f", 262144 * d / (m * sxy - sx * sy)
        }'
}

log "human-like benchmark: ${size} Mbp, $reads $regime reads, bcuda aln $mode $A -t $t, commit $commit"
t0=$(now)
# REUSE_INDEX=1 with a W kept by an earlier run (KEEP_W=1) of the same size: its genome and index.
reuse=; [ -n "${REUSE_INDEX:-}" ] && [ -s $W/genome.fa.sa ] && reuse=1
if [ -n "$reuse" ]; then
    log "genome and index of the earlier run in $W reused"
else
    $DEV synth-genome --size-mbp "$size" --seed 1 --human-like > $W/genome.fa 2> $W/synth.log
    log "genome generated in $(secs $t0 $(now)) s: $(cat $W/synth.log)"
fi
while [ -n "${WAIT_FOR:-}" ] && [ ! -e "$WAIT_FOR" ]; do sleep 1; done
# The reads are simulated while the index builds. dwgsim is single-threaded, so SIM_JOBS
# (default 8) runs simulate N_READS / SIM_JOBS reads each, seeded 7, 8, ..., concatenated in
# that order (each run draws its own genome mutations, as separate samples would). Another
# SIM_JOBS is another read set (and no faster at 3.1 Gbp: each run parses the whole genome).
jobs=${SIM_JOBS:-8}
(
    if [ "$regime" = adna ]; then
        $C/sim_adna $W/genome.fa "$reads" 7 > $W/reads.fq || exit 1
        exit 0
    fi
    for j in $(seq 0 $((jobs - 1))); do
        n=$(( reads / jobs + (j < reads % jobs ? 1 : 0) ))
        $C/dwgsim -o 1 -e 0.005-0.015 -E 0.005-0.015 -r 0.001 -R 0.1 -y 0.02 -1 100 -2 100 -N "$n" -z $((7 + j)) \
            $W/genome.fa $W/dwgsim$j > $W/dwgsim$j.log 2>&1 || { tail -5 $W/dwgsim$j.log; exit 1; } &
    done
    wait
    for j in $(seq 0 $((jobs - 1))); do zcat -f $W/dwgsim$j.bwa.read1.fastq*; done > $W/reads.fq
    rm -f $W/dwgsim*.bwa.read2.fastq* $W/dwgsim*.bfast.fastq* $W/dwgsim*.mutations.*
) &
sim=$!
t0=$(now)
if [ -z "$reuse" ]; then
    /usr/bin/time -f "%e s, peak %M KiB" -o $W/itime $B index -q --sort-memory "$sort_gb" $W/genome.fa || { log "index failed"; exit 1; }
    log "bcuda index ($(nproc) cores, --sort-memory $sort_gb): $(cat $W/itime)"
fi
wait $sim || { log "dwgsim failed"; exit 1; }
log "$(( $(wc -l < $W/reads.fq) / 4 )) $regime reads ready $(secs $t0 $(now)) s after the index started"

# Identity on the first 100k reads: bcuda's CPU path against the mode timed (whole files).
head -400000 $W/reads.fq > $W/r100k.fq
$B aln --cpu --quiet $A -t $t $W/genome.fa $W/r100k.fq > $W/cpu100k.sai
$B aln $mode --quiet $A -t $t $W/genome.fa $W/r100k.fq > $W/mode100k.sai
cmp -s $W/cpu100k.sai $W/mode100k.sai && same100k=yes || same100k=no
log "first 100k reads: bcuda $mode .sai = --cpu .sai: $same100k"

run_bcuda() { # $1: name, $2: more options; times one whole bcuda aln run, keeps its .sai and stderr summary (with the pipeline's timeline)
    local t0=$(now)
    BCUDA_TIMELINE=1 $B aln $mode $A ${2:-} -t $t $W/genome.fa ${3:-$W/reads.fq} > $W/$1.sai 2> $W/$1.summary
    secs $t0 $(now) > $W/$1.secs
    tee -a "$OUT/human-like.log" < $W/$1.summary
}
run_bcuda bcuda1
run_bcuda bcuda2
# bwa's reads: all of them, or the first bwa_reads (steady state), which bcuda aligns too.
bwa_in=$W/reads.fq
if [ "$bwa_reads" -lt "$reads" ]; then
    bwa_in=$W/bwa_in.fq
    head -n $((4 * bwa_reads)) $W/reads.fq > $bwa_in
    run_bcuda bcuda_bwa_in "" $bwa_in
fi
# bwa runs BWA_RUNS times (default 2) and its fastest counts, as bcuda's faster of two does:
# on the same reads and host it took 29.9-35.1 s in five single runs at 1 Gbp.
bwa_all=
for r in $(seq ${BWA_RUNS:-2}); do
    t0=$(now)
    $C/bwa aln $A -t $t $W/genome.fa $bwa_in > $W/bwa.sai 2> /dev/null
    bwa_all="$bwa_all $(secs $t0 $(now))"
done
bwa_s=$(echo $bwa_all | tr ' ' '\n' | sort -g | head -1)
s1=$(cat $W/bcuda1.secs) s2=$(cat $W/bcuda2.secs)
log "whole aln, $reads reads: bcuda $mode $s1 s and $s2 s; bwa aln -t $t on $bwa_reads reads (runs:$bwa_all s; the fastest counts)"

# The faster bcuda run is reported; start-up from its summary, else timed on one read.
best=bcuda1
awk -v a=$s1 -v b=$s2 'BEGIN {exit !(b < a)}' && best=bcuda2
bcuda_s=$(cat $W/$best.secs)
start_up=$(from_summary 'start-up[^0-9]*\([0-9.][0-9.]*\) s' $W/$best.summary)
if [ "$start_up" = NA ]; then
    head -4 $W/reads.fq > $W/one.fq
    t0=$(now); $B aln $mode --quiet $A -t $t $W/genome.fa $W/one.fq > /dev/null; start_up=$(secs $t0 $(now))
    log "start-up (one-read run): $start_up s"
fi
steady=$(awk -v n=$reads -v s=$bcuda_s -v u=$start_up 'BEGIN {printf "%.0f", n / (s - u)}')
ratio=$(awk -v a=$bwa_s -v b=$bcuda_s 'BEGIN {printf "%.2f", a / b}')
retried=$(retried_reads $W/$best.summary)
on_cpu=$(from_summary ' \([0-9][0-9]*\) reads aligned on the CPU' $W/$best.summary)

bwa_cmp=$W/bcuda1.sai
[ "$bwa_in" = "$W/reads.fq" ] || bwa_cmp=$W/bcuda_bwa_in.sai
cmp -s <(tail -c +69 $bwa_cmp) <(tail -c +69 $W/bwa.sai) && same_bwa=yes || same_bwa=no
cmp -s $W/bcuda1.sai $W/bcuda2.sai && same_runs=yes || same_runs=no
log ".sai records: bcuda = bwa: $same_bwa; bcuda run 1 = run 2: $same_runs; first 100k = CPU: $same100k"
identical=no
[ $same_bwa$same_runs$same100k = yesyesyes ] && identical=yes

# The steady-state row (every run), then the older table's (bwa on all the reads, 100 bp only).
stsv=$OUT/steady-h100.tsv
[ "$mode" = --gpu ] || stsv=$OUT/steady${mode#-}.tsv
busy=$(from_summary 'GPU 0 ([^)]*): [^;]*busy \([0-9.][0-9.]*\) s' $W/$best.summary)
[ -s "$stsv" ] || printf "genome_mbp\tregime\treads\tbcuda_s\tgpu_busy_s\tgpu_reads_per_s\te2e_reads_per_s\tbwa_t16_s_per_1M\tsai_identical\tcommit\n" > "$stsv"
awk -v g="$size" -v r="$regime" -v n="$reads" -v s="$bcuda_s" -v b="$busy" -v bw="$bwa_s" -v bn="$bwa_reads" -v i="$identical" -v c="$commit" \
    'BEGIN {printf "%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.2f\t%s\t%s\n", g, r, n, s, b, (b + 0 > 0 ? sprintf("%.0f", n / b) : "NA"), n / s, bw * 1000000 / bn, i, c}' | tee -a "$stsv"
if [ "$regime" != 100bp ] || [ "$bwa_reads" -lt "$reads" ]; then
    log "row appended to $(basename $stsv) only (bwa did not align all the reads with bcuda's options)"
else
[ -s "$tsv" ] || printf "genome_mbp\treads\tbcuda_gpu_s\tbcuda_steady_reads_per_s\tbwa_aln_t16_s\tratio\treads_retried\treads_on_cpu\tsai_identical\tcommit\n" > "$tsv"
printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$size" "$reads" "$bcuda_s" "$steady" "$bwa_s" "$ratio" "$retried" "$on_cpu" "$identical" "$commit" | tee -a "$tsv"
log "rows appended to $(basename $tsv) and $(basename $stsv) (start-up $start_up s excluded from the steady rate)"
fi
middle=$(middle_rate $W/$best.summary)
log "middle half of the batches: $middle reads/s ($(awk -v m=$middle -v n=$reads -v b=$bwa_s 'BEGIN {if (m + 0 > 0) printf "%.1fx", m / (n / b); else print "NA"}') bwa's rate)"
# The reads the GPU left to the CPU (named by the timeline), profiled on the CPU: bwa's pops
# and stack peak, and whether the team search's model (src/search/level_search.rs) with pass 3's
# team and pool holds them.
pool=$(grep -o 'pass 3 [^;]*teams of [0-9]* threads with [0-9]* entries' $W/$best.summary | head -1)
for i in $(grep -o 'reads aligned there: reads [0-9, ]*' $W/$best.summary | grep -o '[0-9][0-9]*' | head -3); do
    sed -n "$((4 * i + 1)),$((4 * i + 4))p" $W/reads.fq > $W/left.fq
    log "read $i left to the CPU ($(head -1 $W/left.fq)), profiled with ${pool:-pass 3 not run}:"
    [ -n "$pool" ] && $DEV stack-profile --lanes $(echo "$pool" | sed 's/.*teams of \([0-9]*\).*/\1/') --level-capacity $(echo "$pool" | sed 's/.* with \([0-9]*\) entries/\1/') \
        --capacity 2048 --exact-entries-limit $W/genome.fa $W/left.fq 2>&1 | sed -n '/^bounded entries/,/^groups of chains/p' | grep -v '^groups of chains' | tee -a "$OUT/human-like.log"
done

# Several GPUs (issue 14): the same reads on the first N GPUs for each N of GPUS; each row's
# .sai must equal bwa's records and the first N's file, and its steady rate (start-up from
# its summary excluded) is compared with the first N's, as is its middle rate.
if [ -n "${GPUS:-}" ]; then
    mtsv=$OUT/multi-gpu.tsv
    [ -s "$mtsv" ] || printf "genome_mbp\treads\tgpus\tbcuda_s\tstart_up_s\tsteady_reads_per_s\tscaling\tmiddle_reads_per_s\tmiddle_scaling\tsai_identical\tcommit\n" > "$mtsv"
    first= base= mbase=
    for g in $GPUS; do
        run_bcuda gpus${g}a "--gpus $g"
        run_bcuda gpus${g}b "--gpus $g"
        run=gpus${g}a
        awk -v a=$(cat $W/gpus${g}a.secs) -v b=$(cat $W/gpus${g}b.secs) 'BEGIN {exit !(b < a)}' && run=gpus${g}b
        s=$(cat $W/$run.secs)
        up=$(from_summary 'start-up[^0-9]*\([0-9.][0-9.]*\) s' $W/$run.summary)
        rate=$(awk -v n=$reads -v s=$s -v u=$up 'BEGIN {printf "%.0f", n / (s - u)}')
        middle=$(middle_rate $W/$run.summary)
        first=${first:-$run} base=${base:-$rate} mbase=${mbase:-$middle}
        same=no
        cmp -s $W/$first.sai $W/gpus${g}a.sai && cmp -s $W/$first.sai $W/gpus${g}b.sai \
            && cmp -s $W/$run.sai $W/bcuda1.sai && [ $same_bwa = yes ] && same=yes
        scaling=$(awk -v a=$rate -v b=$base 'BEGIN {printf "%.2f", a / b}')
        mscaling=$(awk -v a=$middle -v b=$mbase 'BEGIN {if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "NA"}')
        printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$size" "$reads" "$g" "$s" "$up" "$rate" "$scaling" "$middle" "$mscaling" "$same" "$commit" | tee -a "$mtsv"
    done
    log "rows appended to $(basename $mtsv) (.sai identical: to the first --gpus run's and to bwa's records)"
fi
# One more bcuda aln on the same reads with settings of the environment (sweep_run LABEL
# VAR=VALUE...) and aln options in aln_opts (aln_opts=--no-tuned sweep_run ...), timed; its
# .sai must equal bwa's records.
sweep_run() {
    local t0=$(now) s same
    env "${@:2}" $B aln $mode $A ${aln_opts:-} -t $t $W/genome.fa $W/reads.fq > $W/sweep.sai 2> $W/sweep.summary
    s=$(secs $t0 $(now))
    cmp -s $W/sweep.sai $W/bcuda1.sai && same=yes || same=no
    log "$1: $s s, .sai = the first run's (whose records = bwa's: $same_bwa): $same; $(grep -o 'inexact search [0-9].*' $W/sweep.summary | head -1); $(grep -o 'GPU 0 .*' $W/sweep.summary | head -1); $(grep -o 'stages busy.*' $W/sweep.summary)"
}
# Inexact kernel switches (issue 13's genome, without a tuning run): SWEEP="a=1;b=2 c=0;..."
# times bcuda aln once per setting on the same reads.
if [ -n "${SWEEP:-}" ]; then
    IFS=';' read -ra settings <<< "$SWEEP"
    for sw in "${settings[@]}"; do sweep_run "sweep [$sw]" "BCUDA_TEST_INEXACT_SWITCHES=$sw"; done
fi
# Any other test settings (ENV_SWEEP="BCUDA_TEST_SLOTS=3;BCUDA_TEST_SLOTS=3 BCUDA_TEST_INEXACT_SWITCHES=a=1,b=2;..."),
# one run per item, its assignments separated by spaces.
if [ -n "${ENV_SWEEP:-}" ]; then
    IFS=';' read -ra settings <<< "$ENV_SWEEP"
    for e in "${settings[@]}"; do sweep_run "with $e" $e; done
fi
# Reads per batch (BATCH_SWEEP="131072 65536"): the same run with other batch sizes.
for n in ${BATCH_SWEEP:-}; do sweep_run "batches of $n reads" "BCUDA_TEST_BATCH_READS=$n"; done
# VARIANT=file.cu: a hand-edited cuda/inexact_match.cu, installed as this GPU's tuned kernels
# (bcuda-dev variant-tuned) and timed against the unmodified kernels (--no-tuned) on the same
# reads, alternately, VARIANT_ROUNDS times (default 3; its first run compiles it); its .sai
# must equal bwa's records. The file is removed afterwards.
if [ -n "${VARIANT:-}" ]; then
    tuned_file=$($DEV variant-tuned "$VARIANT") || { log "bcuda-dev variant-tuned failed"; exit 1; }
    for r in $(seq ${VARIANT_ROUNDS:-3}); do
        sweep_run "variant $(basename "$VARIANT") (round $r)"
        aln_opts=--no-tuned sweep_run "plain (round $r)"
    done
    rm -f "$tuned_file"
fi
# NCU=1: Nsight Compute on batch 0 of the first 100k reads (one launch each of read_widths, pass 1, 2
# and 3): occupancy, registers, warp stalls, memory traffic and the source lines where warps
# stall most (kernels compiled with -lineinfo), in $OUT/ncu.txt; every stall reason's cycles
# per issued instruction, in $OUT/ncu-stalls.csv.
if [ -n "${NCU:-}" ] && command -v ncu > /dev/null; then
    profiled=(--clock-control none --kernel-name regex:'read_widths|inexact_search|inexact_level' --launch-count 4)
    run=($B aln $mode --quiet $A -t $t -f $W/ncu.sai $W/genome.fa $W/r100k.fq)
    BCUDA_TEST_LINEINFO=1 timeout 240 ncu "${profiled[@]}" \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats --section SourceCounters \
        "${run[@]}" > $OUT/ncu.txt 2>&1 < /dev/null
    log "ncu (exit $?): $(grep -c 'inexact_' $OUT/ncu.txt) kernel sections in ncu.txt"
    timeout 240 ncu "${profiled[@]}" --csv --page raw --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
        "${run[@]}" > $OUT/ncu-stalls.csv 2>&1 < /dev/null
    log "ncu stall reasons (exit $?): $(wc -l < $OUT/ncu-stalls.csv) lines in ncu-stalls.csv"
fi
# KEEP_W=1: the genome, index, reads and bwa's .sai stay in $W (set W too) for a later command.
[ -n "${KEEP_W:-}" ] || rm -rf "$W"
log "done"
