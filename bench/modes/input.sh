# bench/run input READS.fq [INPUT-BENCH OPTIONS]: reads parsed and packed per second
# (bcuda-dev input-bench: plain FASTQ, gzip, BGZF and the plain file cut in four, each the
# best of three runs), rows in input-rate.tsv (input cores reads reads_per_s commit; the
# columns are described in input-rate.md). Log: input-rate.log.
# bench/run input memory INDEX READS.fq [COPIES...]: peak host memory of bcuda aln --cpu -t 2
# against input size, READS.fq repeated COPIES times (default 4 and 16) through standard
# input (no disk space needed). Log: input-memory.log.
ANY_HOST=1

mode_main() {
    [ $# -ge 1 ] || die "usage: bench/run input READS.fq | input memory INDEX READS.fq [COPIES...]"
    if [ "$1" = memory ]; then
        shift
        input_memory "$@"
        return
    fi
    local reads=$1 row
    shift
    [[ " $* " == *" --repeats"* ]] || set -- --repeats 3 "$@"
    TAG=
    start_log input-rate
    $DEV input-bench "$reads" --work "$W/input-bench" "$@" > "$W/rows" 2> "$W/err" || { log_stdin < "$W/err"; return 1; }
    # Each run's busy stages (reader, packer, drop): which one sets the pace on this host.
    log_stdin < "$W/err"
    # input-bench names the checkout's commit; the binaries' (the bundle's) is the one measured.
    while read -r input cores reads rate _; do
        tsv_row input-rate.tsv "input cores reads reads_per_s commit" "$input" "$cores" "$reads" "$rate" "$COMMIT_NOW"
    done < <(tail -n +2 "$W/rows")
}

input_memory() { # INDEX READS [COPIES...]
    [ $# -ge 2 ] || die "usage: bench/run input memory INDEX READS.fq [COPIES...]"
    local index=$1 reads=$2 n copies rss wall counts
    shift 2
    counts=("$@")
    [ $# -gt 0 ] || counts=(4 16)
    TAG=
    start_log input-memory
    n=$(($(wc -l < "$reads") / 4))
    log "reads	max_rss_mb	wall"
    for copies in "${counts[@]}"; do
        for _ in $(seq "$copies"); do cat "$reads"; done | /usr/bin/time -v $B aln --cpu --quiet -t 2 "$index" - 2> "$W/time" > /dev/null
        rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$W/time")
        wall=$(awk -F': ' '/Elapsed/ {print $2}' "$W/time")
        log "$((copies * n))	$(awk -v k="$rss" 'BEGIN {printf "%.0f", k / 1024}')	$wall"
    done
}
