# bench/run candidates SIZE_MBP [READS=1000000]: the candidates' enumeration on the GPU
# (bcuda-dev candidates-gpu, src/gpu/candidates.rs) on the human-like benchmark's genome and
# reads (bench/modes/speed.sh: REGIME, SIM_JOBS, SORT_GB, REUSE_INDEX with KEEP_W), beside one
# bcuda aln --gpu run on the same reads (its GPU busy and passes). The GPU's alignments are
# first checked against the CPU model on CHECK reads (default 2000); the first batch's rounds
# are timed one by one; bcuda aln then runs on the reads the ladder leaves to bwa's search. Then each of CAND_SWEEP's argument sets (';' between them; default
# --bwa-array, counting from bwa's array instead of the sectors), and with NCU=1 Nsight
# Compute on one busy round (ncu-candidates-TAG-COMMIT.txt); with EXACT_TOO=1 the ladder also
# takes the reads that occur whole, and bcuda aln runs on the reads it leaves. Log:
# candidates-TAG.log.
. bench/modes/speed.sh

mode_main() {
    [ $# -ge 1 ] || die "usage: bench/run candidates SIZE_MBP [READS]"
    start_log candidates
    SIZE_MBP=$1 N_READS=${2:-1000000} REG=${REGIME:-100bp} T=${THREADS:-16}
    A=()
    [ "$REG" = adna ] && A=(-l 1024 -n 0.01 -o 2)
    log "candidates: $SIZE_MBP Mbp, $N_READS $REG reads, options ${A[*]}, commit $COMMIT_NOW"
    genome_index_reads || return 1
    run_bcuda bcuda1
    local cand=("$DEV" candidates-gpu "${A[@]}" ${CAND_ARGS:-})
    "${cand[@]}" --check "${CHECK:-2000}" --round-times --write-rest "$W/rest.fq" "$W/genome.fa" "$W/reads.fq" 2>&1 \
        | log_stdin
    log "bcuda aln on the $(($(wc -l < "$W/rest.fq") / 4)) reads left to bwa's search (exact, or left by the ladder):"
    run_bcuda rest "" "$W/rest.fq"
    local variant
    IFS=';' read -ra variants <<< "${CAND_SWEEP:---bwa-array}"
    for variant in "${variants[@]}"; do
        log "with $variant:"
        "${cand[@]}" $variant "$W/genome.fa" "$W/reads.fq" 2>&1 | log_stdin
    done
    if [ -n "${EXACT_TOO:-}" ]; then
        log "with the reads that occur whole up the ladder too:"
        local exact_too=(--exact-too)
        # CAND_ARGS may hold it already (the tool takes it once).
        [[ " ${CAND_ARGS:-} " == *" --exact-too "* ]] && exact_too=()
        "${cand[@]}" "${exact_too[@]}" --write-rest "$W/rest2.fq" "$W/genome.fa" "$W/reads.fq" 2>&1 | log_stdin
        log "bcuda aln on the $(($(wc -l < "$W/rest2.fq") / 4)) reads left by the ladder:"
        run_bcuda rest2 "" "$W/rest2.fq"
    fi
    [ -z "${NCU:-}" ] || candidates_ncu
}

# Nsight Compute on one round of the first rung (its 9th, among the busiest) of one batch.
candidates_ncu() {
    command -v ncu > /dev/null || { log "NCU=1: ncu not found"; return; }
    local out=$RES/ncu-candidates-$TAG-$COMMIT_NOW.txt
    BCUDA_TEST_LINEINFO=1 timeout 240 ncu --clock-control none --kernel-name candidate_round --launch-skip 8 \
        --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats --section SourceCounters \
        "${cand[@]}" --max-reads 262144 "$W/genome.fa" "$W/reads.fq" > "$out" 2>&1 < /dev/null
    log "ncu (exit $?): $(grep -c 'candidate_round' "$out") lines naming candidate_round in $(basename "$out")"
}
