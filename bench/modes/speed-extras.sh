# The optional parts of the human-like benchmark (sourced by speed.sh), each run on the same
# genome and reads after the timed runs.

# The reads the GPU left to the CPU (named by the timeline), profiled on the CPU: bwa's pops
# and stack peak, and whether the team search's model (src/search/level_search.rs) with
# the last pass's team and pool holds them.
profile_left_to_cpu() {
    local pool i lanes capacity
    pool=$(grep -o 'pass [34] [^;]*teams of [0-9]* threads with [0-9]* entries' "$W/$BEST.summary" | tail -1)
    for i in $(grep -o 'reads aligned there: reads [0-9, ]*' "$W/$BEST.summary" | grep -o '[0-9][0-9]*' | head -3); do
        sed -n "$((4 * i + 1)),$((4 * i + 4))p" "$W/reads.fq" > "$W/left.fq"
        log "read $i left to the CPU ($(head -1 "$W/left.fq")), profiled with ${pool:-no last pass run}:"
        [ -n "$pool" ] || continue
        lanes=$(echo "$pool" | sed 's/.*teams of \([0-9]*\).*/\1/')
        capacity=$(echo "$pool" | sed 's/.* with \([0-9]*\) entries/\1/')
        $DEV stack-profile --lanes "$lanes" --level-capacity "$capacity" --capacity 2048 --exact-entries-limit \
            "$W/genome.fa" "$W/left.fq" 2>&1 | sed -n '/^bounded entries/,/^groups of chains/p' | grep -v '^groups of chains' | log_stdin
    done
}

# GPUS="1 2": the same reads on the first N GPUs for each N, twice each; a row each in
# multi-gpu-TAG.tsv. Its .sai must equal the first N's and bwa's records; its steady rate
# (start-up excluded) and middle rate are compared with the first N's.
multi_gpu_rows() {
    local first= base= mbase= g run s up rate middle same
    for g in $GPUS; do
        run_bcuda "gpus${g}a" "--gpus $g"
        run_bcuda "gpus${g}b" "--gpus $g"
        run=gpus${g}a
        awk -v a="$(cat "$W/gpus${g}a.secs")" -v b="$(cat "$W/gpus${g}b.secs")" 'BEGIN {exit !(b < a)}' && run=gpus${g}b
        s=$(cat "$W/$run.secs")
        up=$(from_summary 'start-up[^0-9]*\([0-9.][0-9.]*\) s' "$W/$run.summary")
        rate=$(awk -v n="$N_READS" -v s="$s" -v u="$up" 'BEGIN {printf "%.0f", n / (s - u)}')
        middle=$(middle_rate "$W/$run.summary")
        first=${first:-$run} base=${base:-$rate} mbase=${mbase:-$middle}
        same=no
        cmp -s "$W/$first.sai" "$W/gpus${g}a.sai" && cmp -s "$W/$first.sai" "$W/gpus${g}b.sai" \
            && cmp -s "$W/$run.sai" "$W/bcuda1.sai" && [ "$SAME_BWA" = yes ] && same=yes
        tsv_row "multi-gpu-$TAG.tsv" "genome_mbp reads gpus bcuda_s start_up_s steady_reads_per_s scaling middle_reads_per_s middle_scaling sai_identical commit" \
            "$SIZE_MBP" "$N_READS" "$g" "$s" "$up" "$rate" "$(awk -v a="$rate" -v b="$base" 'BEGIN {printf "%.2f", a / b}')" "$middle" \
            "$(awk -v a="$middle" -v b="$mbase" 'BEGIN {if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "NA"}')" "$same" "$COMMIT_NOW"
    done
}

# sweep_run LABEL [VAR=VALUE...]: one more bcuda aln on the same reads with those settings of
# the environment (and aln options in aln_opts), timed; its .sai must equal the first run's.
sweep_run() {
    local t0 s same
    t0=$(now)
    env "${@:2}" $B aln "$ALIGN" "${A[@]}" ${aln_opts:-} -t "$T" "$W/genome.fa" "$W/reads.fq" > "$W/sweep.sai" 2> "$W/sweep.summary"
    s=$(secs "$t0" "$(now)")
    cmp -s "$W/sweep.sai" "$W/bcuda1.sai" && same=yes || same=no
    log "$1: $s s, .sai = the first run's (whose records = bwa's: $SAME_BWA): $same; $(grep -o 'inexact search [0-9].*' "$W/sweep.summary" | head -1); $(grep -o 'GPU 0 .*' "$W/sweep.summary" | head -1); $(grep -o 'stages busy.*' "$W/sweep.summary")"
}

# SWEEP="a=1;b=2 c=0": once per setting of the inexact kernels' switches; ENV_SWEEP="X=1;X=2
# Y=3": once per set of test settings; BATCH_SWEEP="131072 65536": once per batch size;
# VARIANT, NCU (1 or lines): below.
sweeps() {
    local settings sw e n
    if [ -n "${SWEEP:-}" ]; then
        IFS=';' read -ra settings <<< "$SWEEP"
        for sw in "${settings[@]}"; do sweep_run "sweep [$sw]" "BCUDA_TEST_INEXACT_SWITCHES=$sw"; done
    fi
    if [ -n "${ENV_SWEEP:-}" ]; then
        IFS=';' read -ra settings <<< "$ENV_SWEEP"
        for e in "${settings[@]}"; do sweep_run "with $e" $e; done
    fi
    for n in ${BATCH_SWEEP:-}; do sweep_run "batches of $n reads" "BCUDA_TEST_BATCH_READS=$n"; done
    [ -z "${VARIANT:-}" ] || variant_runs
    case ${NCU:-} in
    '') ;;
    lines) ncu_lines ;;
    *) ncu_profile ;;
    esac
}

# VARIANT=file.cu: a hand-edited cuda/inexact_match.cu installed as this GPU's tuned kernels
# (bcuda-dev variant-tuned) and timed against the unmodified kernels (--no-tuned) on the same
# reads, alternately, VARIANT_ROUNDS times (default 3; its first run compiles it). The
# installed file is removed afterwards.
variant_runs() {
    local tuned_file r
    tuned_file=$($DEV variant-tuned "$VARIANT") || { log "bcuda-dev variant-tuned failed"; return 1; }
    for r in $(seq "${VARIANT_ROUNDS:-3}"); do
        sweep_run "variant $(basename "$VARIANT") (round $r)"
        aln_opts=--no-tuned sweep_run "plain (round $r)"
    done
    rm -f "$tuned_file"
}

# NCU=1: Nsight Compute on batch 0 of the first 100k reads (one launch each of read_widths,
# pass 1, 2 and 3): occupancy, registers, warp stalls, memory traffic and the source lines
# where warps stall most (kernels compiled with -lineinfo), in ncu-TAG-COMMIT.txt; every
# stall reason's cycles per issued instruction in ncu-stalls-TAG-COMMIT.csv.
ncu_profile() {
    command -v ncu > /dev/null || { log "NCU=1: ncu not found"; return; }
    local profiled=(--clock-control none --kernel-name regex:'read_widths|inexact_search|inexact_level' --launch-count 4)
    local run=($B aln "$ALIGN" --quiet "${A[@]}" -t "$T" -f "$W/ncu.sai" "$W/genome.fa" "$W/r100k.fq")
    BCUDA_TEST_LINEINFO=1 timeout 240 ncu "${profiled[@]}" \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats --section SourceCounters \
        "${run[@]}" > "$RES/ncu-$TAG-$COMMIT_NOW.txt" 2>&1 < /dev/null
    log "ncu (exit $?): $(grep -c 'inexact_' "$RES/ncu-$TAG-$COMMIT_NOW.txt") kernel sections in ncu-$TAG-$COMMIT_NOW.txt"
    timeout 240 ncu "${profiled[@]}" --csv --page raw --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
        "${run[@]}" > "$RES/ncu-stalls-$TAG-$COMMIT_NOW.csv" 2>&1 < /dev/null
    log "ncu stall reasons (exit $?): $(wc -l < "$RES/ncu-stalls-$TAG-$COMMIT_NOW.csv") lines in ncu-stalls-$TAG-$COMMIT_NOW.csv"
}

# NCU=lines: Nsight Compute's counters per CUDA source line of one launch of pass 2 and one of
# pass 3 (inexact_level's first two launches: batch 0 of the first 100k reads), exported as CSV
# (ncu-lines-passN-REGIME-TAG-COMMIT.csv.gz) and summed per line and per function by bench/ncu-lines.py
# (ncu-lines-REGIME-TAG-COMMIT.txt): where each pass's warps stall, which lines issue and load.
ncu_lines() {
    command -v ncu > /dev/null || { log "NCU=lines: ncu not found"; return; }
    local dir pass csv out=$RES/ncu-lines-$REG-$TAG-$COMMIT_NOW.txt
    local run=($B aln "$ALIGN" --quiet "${A[@]}" -t "$T" -f "$W/ncu.sai" "$W/genome.fa" "$W/r100k.fq")
    dir=$(mktemp -d -p "$W")
    # NVRTC names its source default_program; ncu imports the source from the working directory.
    { cat cuda/bwt.cuh; echo; cat cuda/inexact_match.cu; } > "$dir/default_program"
    : > "$out"
    for pass in 2 3; do
        (cd "$dir" && BCUDA_TEST_LINEINFO=1 timeout 300 ncu -f --clock-control none --kernel-name inexact_level \
            --launch-skip $((pass - 2)) --launch-count 1 --set full --import-source yes -o "pass$pass" "${run[@]}") \
            > "$dir/ncu$pass.log" 2>&1 < /dev/null
        csv=$RES/ncu-lines-pass$pass-$REG-$TAG-$COMMIT_NOW.csv.gz
        (cd "$dir" && ncu -i "pass$pass.ncu-rep" --page source --csv --print-source cuda,sass) | gzip > "$csv"
        log "ncu pass $pass: $(tail -1 "$dir/ncu$pass.log"); $(zcat "$csv" | wc -l) lines in $(basename "$csv")"
        { echo "## pass $pass, $REG"; python3 bench/ncu-lines.py "$csv" "$dir/default_program"; echo; } >> "$out" 2>&1
    done
    rm -rf "$dir"
}
