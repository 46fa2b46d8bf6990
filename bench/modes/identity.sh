# bench/run identity: the GPU's .sai against the CPU's (the oracle) on every read set and
# option set of the CPU tests (-n, -o, -l/-k, -R, -N, -m, -e, reads of 36 to 250 bases and
# of mixed lengths, gzip'd input), with the GPU's paths forced by the test hooks (small
# stacks, kernel switches, the interval table's depth, batches in flight, the no-hit pass on
# ancient-DNA reads half of them random); then start-up,
# exact_match alone (and with each switch flipped, unless SKIP_SWITCHES=1), whole aln on 1M
# reads against bwa aln, and failed batches and a dead GPU (the CPU takes over: same .sai).
# Prints SAME / DIFF / FAIL lines and a final count; exits 1 on any DIFF or FAIL.
# --cpu: bcuda aln --cpu against bwa aln on the same read and option sets, for a machine
# without a GPU (about a minute on two cores).
# ONLY_PATHS="exact_replay ..." runs only those GPU paths (exact_replay_paths, ...; layout: the
# batch's hits and codes between host and GPU; ladder: the rungs in the team passes, a test
# hook, not in the full run).
# Log: gpu-check-TAG.log.
. bench/modes/identity-gpu.sh

mode_main() {
    start_log gpu-check
    T=${THREADS:-16} SAME=0 FAILURES=0
    # index's exit status counts too (a crash at exit once left whole files behind).
    for g in lambda.fa ecoli536.fa; do
        genome_copy $g && { $B index -q "$W/$g" || fail "bcuda index $g exited with status $?"; }
    done
    cp testdata/demo_ref.fa "$W/" && $B index -q "$W/demo_ref.fa"
    log "== $([ "$ALIGN" = --gpu ] && echo "GPU .sai vs CPU .sai" || echo "bcuda aln --cpu .sai vs bwa aln .sai")"
    if [ -n "${ONLY_PATHS:-}" ]; then
        # ONLY_PATHS="exact_replay no_hit": those GPU paths alone (name_paths), for a quick check;
        # "options": bwa's option sets on the default paths.
        for f in $ONLY_PATHS; do "${f}_paths"; done
        log "identity: $SAME SAME, $FAILURES DIFF or FAIL"
        [ "$FAILURES" = 0 ]
        return
    fi
    options_paths
    if [ "$ALIGN" = --gpu ]; then
        layout_paths
        forced_paths
        no_hit_paths
        exact_replay_paths
        proof_paths
        prefetch_paths
        drop_paths
        records_paths
        pairs_paths
        middle_paths
        order_paths
        root_order_paths
    fi
    log "identity failures: $FAILURES"
    if [ "$ALIGN" = --gpu ]; then
        start_up
        kernel_alone
        million_reads
    fi
    log "identity: $SAME SAME, $FAILURES DIFF or FAIL"
    [ "$FAILURES" = 0 ]
}

# check GENOME READS [OPTIONS...]: the GPU's .sai against the CPU's (--cpu: bcuda's against
# bwa's), one SAME, DIFF or FAIL line naming the test hooks set.
check() {
    local prefix=$1 reads=$2 hooks
    shift 2
    hooks=${BCUDA_TEST_STACKS:+ stacks $BCUDA_TEST_STACKS}${BCUDA_TEST_INEXACT_SWITCHES:+ switches $BCUDA_TEST_INEXACT_SWITCHES}
    hooks+=${BCUDA_TEST_HITS_PER_READ:+ hits a read $BCUDA_TEST_HITS_PER_READ}${BCUDA_TEST_NO_HOST_ROOM:+ no host room}
    hooks+=${BCUDA_TEST_LADDER:+ ladder $BCUDA_TEST_LADDER}
    $B aln --cpu --quiet -t "$T" "$@" "$W/$prefix" "$reads" > "$W/cpu.sai"
    if [ "$ALIGN" = --cpu ]; then
        "$BWA" aln -t "$T" "$@" "$W/$prefix" "$reads" > "$W/other.sai" 2> "$W/other.err"
    else
        $B aln --gpu --quiet -t "$T" "$@" "$W/$prefix" "$reads" > "$W/other.sai" 2> "$W/other.err"
    fi || { fail "$prefix $(basename "$reads") [$*]$hooks: $(tail -2 "$W/other.err")"; return; }
    if cmp -s "$W/cpu.sai" "$W/other.sai"; then
        SAME=$((SAME + 1))
        log "SAME  $prefix $(basename "$reads") [$*]$hooks $(stat -c %s "$W/cpu.sai") bytes"
    else
        FAILURES=$((FAILURES + 1))
        log "DIFF  $prefix $(basename "$reads") [$*]$hooks"
    fi
}
fail() { FAILURES=$((FAILURES + 1)); log "FAIL  $*"; }
# verdict WHAT: a SAME or DIFF line from the last command's status.
verdict() {
    if [ "$1" = 0 ]; then SAME=$((SAME + 1)); log "SAME  $2"; else FAILURES=$((FAILURES + 1)); log "DIFF  $2"; fi
}

options_paths() {
    local lambda_art ecoli_art L mixed=$W/mixed.fq
    lambda_art=$(data_file lambda_art.fq) ecoli_art=$(data_file ecoli536_art.fq)
    for opts in "" "-n 2" "-o 0" "-l 25 -k 1" "-R 5" "-N"; do check lambda.fa "$lambda_art" $opts; done
    zcat -f "$lambda_art" | gzip -c > "$W/lambda_art.gz.fq.gz"
    check lambda.fa "$W/lambda_art.gz.fq.gz"
    check demo_ref.fa testdata/demo.fq
    check demo_ref.fa testdata/demo.fq -o 2 -e 2
    check ecoli536.fa "$ecoli_art"
    check ecoli536.fa "$ecoli_art" -n 2
    check ecoli536.fa "$ecoli_art" -m 300
    for L in 36 76 150 250; do check ecoli536.fa "$(data_file sim$L.fq)"; done
    # Reads of every length in one batch: the batch's cap on gap opens is set by its longest.
    for L in 36 76 150 250; do zcat -f "$(data_file sim$L.fq)" | head -n 20000; done > "$mixed"
    check ecoli536.fa "$mixed"
    check ecoli536.fa "$mixed" -l 32 -o 2
}
