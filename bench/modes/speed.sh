# bench/run speed SIZE_MBP [READS=1000000]: the human-like benchmark. A seeded human-like
# genome of SIZE_MBP Mbp (bcuda-dev synth-genome --human-like), indexed by bcuda
# (--sort-memory SORT_GB GiB, default 2) while READS reads are simulated; then bcuda aln
# (twice; the faster counts) and bwa aln (BWA_RUNS times, default 2; the fastest counts) with
# -t THREADS (default 16) on the same index and reads, the .sai files compared.
# REGIME=100bp (default): dwgsim 100 bp reads in SIM_JOBS (default 8) jobs (error ramp
# 0.5-1.5 %, indels, 2 % random; single-end), bwa's default options. REGIME=adna: reads of
# examples/sim_adna.rs (30-90 bases, deamination at the ends, a share ADNA_RANDOM of them
# random, default 0.05; seed 7) and ancient DNA's options for both aligners, -l 1024 -n 0.01
# -o 2 (nf-core/eager's).
# With more than BWA_READS reads (default 1,000,000) bwa aligns only the first BWA_READS
# (its time per 1M is compared), and bcuda aligns them too for the identity check.
# Rows: every run one in steady-TAG.tsv; a 100bp run where bwa aligned every read one in
# human-like-TAG.tsv. --cpu times bcuda aln --cpu instead (tables *-cpu.tsv).
# Also (bench/modes/speed-extras.sh): GPUS="1 2" (bench/run multi-gpu), SWEEP, ENV_SWEEP,
# BATCH_SWEEP, VARIANT, NCU; REUSE_INDEX=1 with W of an earlier run kept by KEEP_W=1.
# Log: human-like-TAG.log.
. bench/modes/speed-extras.sh

mode_main() {
    [ $# -ge 1 ] || die "usage: bench/run speed SIZE_MBP [READS]"
    start_log human-like
    human_like_benchmark "$1" "${2:-1000000}"
}

human_like_benchmark() { # SIZE READS
    SIZE_MBP=$1 N_READS=$2 REG=${REGIME:-100bp} T=${THREADS:-16}
    A=()
    [ "$REG" = adna ] && A=(-l 1024 -n 0.01 -o 2)
    BWA_N=${BWA_READS:-1000000}
    [ "$BWA_N" -lt "$N_READS" ] || BWA_N=$N_READS
    log "human-like benchmark: $SIZE_MBP Mbp, $N_READS $REG reads, bcuda aln $ALIGN ${A[*]} -t $T, commit $COMMIT_NOW"
    genome_index_reads || return 1
    first_100k
    run_bcuda bcuda1
    run_bcuda bcuda2
    run_bwa
    speed_rows
    middle=$(middle_rate "$W/$BEST.summary")
    # bwa's rate is over the reads it aligned (BWA_N, the first of them in the steady state).
    log "middle half of the batches: $middle reads/s ($(awk -v m="$middle" -v n="$BWA_N" -v b="$BWA_S" \
        'BEGIN {if (m + 0 > 0) printf "%.1fx", m / (n / b); else print "NA"}') bwa's rate)"
    profile_left_to_cpu
    [ -z "${GPUS:-}" ] || multi_gpu_rows
    sweeps
}

# The genome (or the earlier run's with REUSE_INDEX=1), then the reads simulated while the
# index builds.
genome_index_reads() {
    local t0 reuse= sim
    t0=$(now)
    [ -n "${REUSE_INDEX:-}" ] && [ -s "$W/genome.fa.sa" ] && reuse=1
    if [ -n "$reuse" ]; then
        log "genome and index of the earlier run in $W reused"
    else
        human_like_genome "$SIZE_MBP" "$W/genome.fa"
        log "genome generated in $(secs "$t0" "$(now)") s: $(cat "$W/genome.fa.synth.log")"
    fi
    wait_for_go
    simulate_reads &
    sim=$!
    t0=$(now)
    if [ -z "$reuse" ]; then
        /usr/bin/time -f "%e s, peak %M KiB" -o "$W/itime" $B index -q --sort-memory "${SORT_GB:-2}" "$W/genome.fa" \
            || { log "index failed"; return 1; }
        log "bcuda index ($(nproc) cores, --sort-memory ${SORT_GB:-2}): $(cat "$W/itime")"
    fi
    wait $sim || { log "read simulation failed"; return 1; }
    log "$(($(wc -l < "$W/reads.fq") / 4)) $REG reads ready $(secs "$t0" "$(now)") s after the index started"
}

# The steady table's regime: 100bp, adna, or adna-randomSHARE for another ADNA_RANDOM.
regime_label() {
    if [ "$REG" = adna ] && [ -n "${ADNA_RANDOM:-}" ] && [ "$ADNA_RANDOM" != 0.05 ]; then
        echo "adna-random$ADNA_RANDOM"
    else
        echo "$REG"
    fi
}

# SIM_JOBS dwgsim runs of N_READS / SIM_JOBS reads each (each run draws its own genome
# mutations, as separate samples would); another SIM_JOBS is another read set.
simulate_reads() {
    if [ "$REG" = adna ]; then
        "$SIM_ADNA" "$W/genome.fa" "$N_READS" 7 "${ADNA_RANDOM:-0.05}" > "$W/reads.fq"
        return
    fi
    local jobs=${SIM_JOBS:-8} j counts=()
    for j in $(seq 0 $((jobs - 1))); do counts+=($((N_READS / jobs + (j < N_READS % jobs ? 1 : 0)))); done
    dwgsim_reads "$W/genome.fa" "$W/reads.fq" "${counts[@]}"
}

# Identity on the first 100k reads: bcuda's CPU path against the path timed.
first_100k() {
    head -400000 "$W/reads.fq" > "$W/r100k.fq"
    $B aln --cpu --quiet "${A[@]}" -t "$T" "$W/genome.fa" "$W/r100k.fq" > "$W/cpu100k.sai"
    $B aln "$ALIGN" --quiet "${A[@]}" -t "$T" "$W/genome.fa" "$W/r100k.fq" > "$W/mode100k.sai"
    SAME_100K=no
    cmp -s "$W/cpu100k.sai" "$W/mode100k.sai" && SAME_100K=yes
    log "first 100k reads: bcuda $ALIGN .sai = --cpu .sai: $SAME_100K"
}

# run_bcuda NAME [OPTIONS] [READS]: one whole bcuda aln run timed; its .sai, its seconds and
# its stderr summary (with the pipeline's timeline) kept as W/NAME.*.
run_bcuda() {
    local t0
    t0=$(now)
    BCUDA_TIMELINE=1 $B aln "$ALIGN" "${A[@]}" ${2:-} -t "$T" "$W/genome.fa" "${3:-$W/reads.fq}" > "$W/$1.sai" 2> "$W/$1.summary"
    secs "$t0" "$(now)" > "$W/$1.secs"
    log_stdin < "$W/$1.summary"
}

# bwa on all the reads, or on the first BWA_N (steady state), which bcuda aligns too; its
# fastest of BWA_RUNS counts.
run_bwa() {
    local r t0 all=
    BWA_IN=$W/reads.fq
    if [ "$BWA_N" -lt "$N_READS" ]; then
        BWA_IN=$W/bwa_in.fq
        head -n $((4 * BWA_N)) "$W/reads.fq" > "$BWA_IN"
        run_bcuda bcuda_bwa_in "" "$BWA_IN"
    fi
    for r in $(seq "${BWA_RUNS:-2}"); do
        t0=$(now)
        "$BWA" aln "${A[@]}" -t "$T" "$W/genome.fa" "$BWA_IN" > "$W/bwa.sai" 2> /dev/null
        all="$all $(secs "$t0" "$(now)")"
    done
    BWA_S=$(echo $all | tr ' ' '\n' | sort -g | head -1)
    log "whole aln, $N_READS reads: bcuda $ALIGN $(cat "$W/bcuda1.secs") s and $(cat "$W/bcuda2.secs") s; bwa aln -t $T on $BWA_N reads (runs:$all s; the fastest counts)"
}

# The rows: the faster bcuda run against bwa's fastest; start-up from its summary, else timed
# on one read.
speed_rows() {
    local s1 s2 bcuda_s start_up t0 bwa_cmp=$W/bcuda1.sai same_runs=no busy
    s1=$(cat "$W/bcuda1.secs") s2=$(cat "$W/bcuda2.secs")
    BEST=bcuda1
    awk -v a="$s1" -v b="$s2" 'BEGIN {exit !(b < a)}' && BEST=bcuda2
    bcuda_s=$(cat "$W/$BEST.secs")
    start_up=$(from_summary 'start-up[^0-9]*\([0-9.][0-9.]*\) s' "$W/$BEST.summary")
    if [ "$start_up" = NA ]; then
        head -4 "$W/reads.fq" > "$W/one.fq"
        t0=$(now)
        $B aln "$ALIGN" --quiet "${A[@]}" -t "$T" "$W/genome.fa" "$W/one.fq" > /dev/null
        start_up=$(secs "$t0" "$(now)")
        log "start-up (one-read run): $start_up s"
    fi
    [ "$BWA_IN" = "$W/reads.fq" ] || bwa_cmp=$W/bcuda_bwa_in.sai
    SAME_BWA=no
    same_records "$bwa_cmp" "$W/bwa.sai" && SAME_BWA=yes
    cmp -s "$W/bcuda1.sai" "$W/bcuda2.sai" && same_runs=yes
    log ".sai records: bcuda = bwa: $SAME_BWA; bcuda run 1 = run 2: $same_runs; first 100k = CPU: $SAME_100K"
    local identical=no
    [ "$SAME_BWA$same_runs$SAME_100K" = yesyesyes ] && identical=yes
    busy=$(from_summary 'GPU 0 ([^)]*): [^;]*busy \([0-9.][0-9.]*\) s' "$W/$BEST.summary")
    tsv_row "steady-$TAG.tsv" "genome_mbp regime reads bcuda_s gpu_busy_s gpu_reads_per_s e2e_reads_per_s bwa_t16_s_per_1M sai_identical commit" \
        "$SIZE_MBP" "$(regime_label)" "$N_READS" "$bcuda_s" "$busy" \
        "$(awk -v n="$N_READS" -v b="$busy" 'BEGIN {if (b + 0 > 0) printf "%.0f", n / b; else print "NA"}')" \
        "$(awk -v n="$N_READS" -v s="$bcuda_s" 'BEGIN {printf "%.0f", n / s}')" \
        "$(awk -v s="$BWA_S" -v n="$BWA_N" 'BEGIN {printf "%.2f", s * 1000000 / n}')" "$identical" "$COMMIT_NOW"
    if [ "$REG" != 100bp ] || [ "$BWA_N" -lt "$N_READS" ]; then
        log "(not to human-like-$TAG.tsv: bwa did not align all the reads with bcuda's options)"
        return
    fi
    tsv_row "human-like-$TAG.tsv" "genome_mbp reads bcuda_gpu_s bcuda_steady_reads_per_s bwa_aln_t16_s ratio reads_retried reads_on_cpu sai_identical commit" \
        "$SIZE_MBP" "$N_READS" "$bcuda_s" "$(awk -v n="$N_READS" -v s="$bcuda_s" -v u="$start_up" 'BEGIN {printf "%.0f", n / (s - u)}')" \
        "$BWA_S" "$(awk -v a="$BWA_S" -v b="$bcuda_s" 'BEGIN {printf "%.2f", a / b}')" "$(retried_reads "$W/$BEST.summary")" \
        "$(from_summary ' \([0-9][0-9]*\) reads aligned on the CPU' "$W/$BEST.summary")" "$identical" "$COMMIT_NOW"
    log "(start-up $start_up s excluded from the steady rate)"
}

# Reads searched again with larger stacks: those of the inexact passes after the first
# ("pass 2 ... ms on N reads"), or the older summary's "retrying N reads".
retried_reads() {
    grep -o 'pass [0-9]* [0-9.]* ms on [0-9]* reads' "$1" | awk '{n++} $2 > 1 {s += $6} END {if (n) print s + 0}' | grep . \
        || from_summary 'retrying \([0-9][0-9]*\) reads' "$1"
}

# The rate in the middle half of a run, from its timeline: a least-squares line through the
# times at which its middle half of batches (from a quarter of them to three quarters) were
# written, against their number; one full batch (262,144 reads) over its slope. It leaves out
# the pipeline's fill and drain and the GPUs' release at exit, and unlike two end points it
# does not depend on where in a round of the GPUs the quarter marks fall. NA under 12 batches
# (3M reads), where the middle is a few batches that finish in pairs and the last is short.
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
