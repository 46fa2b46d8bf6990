# bench/run autotune ecoli [POP=40] [GENS=5] [BUDGET=5m]: a small real `bcuda autotune` on
# the E. coli index with 4 x the ART reads, then aln with and without the tuned kernel (the
# .sai must not change).
# bench/run autotune human-like [SIZE_MBP=1000] [BUDGET=12m] [HELD_OUT_READS=1000000]: the
# human-like genome indexed, dwgsim reads as in the speed mode (16 jobs), `bcuda autotune`
# on a sample of 2 training batches and 4 of aln's held out (timed as aln overlaps them) within BUDGET, evolving exact_match and the
# inexact kernels together; then aln with the tuned kernels and with --no-tuned, alternately,
# twice each, on HELD_OUT_READS other reads (never seen by autotune), timed end to end, the
# .sai compared. SWEEP="a=1;b=2 c=0": other switch settings timed on the same reads.
# Report, plot and winner in RES/autotune/ecoli-COMMIT/ or human-like-SIZE-COMMIT/. Log:
# autotune-TAG.log.
mode_main() {
    require_gpu
    local form=${1:-}
    shift
    case $form in
    ecoli) REPORT=$RES/autotune/ecoli-$COMMIT_NOW ;;
    human-like) REPORT=$RES/autotune/human-like-${1:-1000}-$COMMIT_NOW ;;
    *) die "usage: bench/run autotune ecoli|human-like [ARGS]" ;;
    esac
    start_log autotune
    mkdir -p "$REPORT"
    autotune_${form/-/_} "$@"
    cp ~/.cache/bcuda/tuned/*.json "$REPORT"/ 2> /dev/null
    log "report, plot and winner in $REPORT"
}

autotune_ecoli() { # [POP] [GENS] [BUDGET]
    local i
    genome_copy ecoli536.fa && $B index -q "$W/ecoli536.fa"
    for i in 1 2 3 4; do zcat -f "$(data_file ecoli536_art.fq)"; done > "$W/reads.fq"
    $B autotune --index "$W/ecoli536.fa" --reads "$W/reads.fq" --pop "${1:-40}" --gens "${2:-5}" --budget "${3:-5m}" \
        --batch-size 159744 --report "$REPORT" 2>&1 | log_stdin
    $B aln --gpu -t 16 "$W/ecoli536.fa" "$W/reads.fq" > "$W/tuned.sai" 2> "$W/tuned.err"
    log_stdin < "$W/tuned.err"
    $B aln --gpu --no-tuned -t 16 --quiet "$W/ecoli536.fa" "$W/reads.fq" > "$W/plain.sai"
    cmp -s "$W/tuned.sai" "$W/plain.sai" && log "aln .sai with the tuned kernel = without" || log "aln .sai DIFFERS with the tuned kernel"
    ls ~/.cache/bcuda/tuned/ 2> /dev/null | log_stdin
}

autotune_human_like() { # [SIZE] [BUDGET] [HELD_OUT_READS]
    local size=${1:-1000} budget=${2:-12m} held=${3:-1000000} sample=$((2 * 159744 + 4 * 262144)) n jobs=16 j counts=() t0
    log "autotune on the human-like benchmark: $size Mbp, budget $budget"
    human_like_genome "$size" "$W/genome.fa"
    wait_for_go
    n=$((sample + held))
    for j in $(seq $jobs); do counts+=($((n / jobs + 1))); done
    dwgsim_reads "$W/genome.fa" "$W/all.fq" "${counts[@]}" &
    $B index -q --sort-memory "${SORT_GB:-8}" "$W/genome.fa" || { log "index failed"; return 1; }
    wait $! || { log "read simulation failed"; return 1; }
    head -n $((4 * sample)) "$W/all.fq" > "$W/sample.fq"
    tail -n +$((4 * sample + 1)) "$W/all.fq" | head -n $((4 * held)) > "$W/held.fq"
    log "$(($(wc -l < "$W/sample.fq") / 4)) sample reads, $(($(wc -l < "$W/held.fq") / 4)) held-out reads"
    t0=$(now)
    $B autotune --index "$W/genome.fa" --reads "$W/sample.fq" --budget "$budget" --report "$REPORT" 2>&1 | log_stdin
    log "autotune took $(secs "$t0" "$(now)") s"
    held_out_runs
    [ -z "${SWEEP:-}" ] || held_out_sweep
}

# Alternately, twice each: the host's state (page cache, clocks) favours neither.
held_out_runs() {
    local round run flag t0 f same=yes
    for round in 1 2; do
        for run in tuned plain; do
            flag=
            [ $run = plain ] && flag=--no-tuned
            t0=$(now)
            $B aln --gpu $flag -t 16 "$W/genome.fa" "$W/held.fq" > "$W/$run$round.sai" 2> "$W/$run$round.err"
            log "aln --gpu $flag on the held-out reads (round $round): $(secs "$t0" "$(now)") s"
            grep -i "kernels:\|tuned\|busy" "$W/$run$round.err" | log_stdin
        done
    done
    for f in tuned1 tuned2 plain2; do cmp -s "$W/plain1.sai" "$W/$f.sai" || same=no; done
    [ $same = yes ] && log "aln .sai with the tuned kernels = without (both rounds)" || log "aln .sai DIFFERS with the tuned kernels"
}

# SWEEP="a=1;b=2 c=0": aln --no-tuned once per setting of the inexact kernels' switches.
held_out_sweep() {
    local settings sw t0 s same
    IFS=';' read -ra settings <<< "$SWEEP"
    for sw in "${settings[@]}"; do
        t0=$(now)
        BCUDA_TEST_INEXACT_SWITCHES=$sw $B aln --gpu --no-tuned -t 16 "$W/genome.fa" "$W/held.fq" > "$W/sweep.sai" 2> "$W/sweep.err"
        s=$(secs "$t0" "$(now)")
        cmp -s "$W/plain1.sai" "$W/sweep.sai" && same=yes || same=no
        log "sweep [$sw]: $s s, .sai = plain's: $same"
        grep -i "kernels:\|busy" "$W/sweep.err" | log_stdin
    done
}
