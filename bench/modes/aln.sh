# bench/run aln [THREADS...]: reads/s of bcuda aln --cpu against bwa aln at the same thread
# counts (default 1 and every core), E. coli 536 with its ART HS25 100 bp reads; the .sai
# compared. A table in the log: aln-cpu.log.
ANY_HOST=1

mode_main() {
    local threads=("$@") reads n t b w same
    [ $# -gt 0 ] || threads=(1 "$(nproc)")
    TAG=cpu
    start_log aln
    ecoli_index
    reads=$(data_file ecoli536_art.fq)
    n=$(($(zcat -f "$reads" | wc -l) / 4))
    log "| threads | reads | bcuda s | bcuda reads/s | bwa s | bwa reads/s | bcuda/bwa | same .sai |"
    log "|---|---|---|---|---|---|---|---|"
    for t in "${threads[@]}"; do
        b=$(wall_secs "$W/bcuda.sai" $B aln --cpu --quiet -t "$t" "$W/ecoli536.fa" "$reads")
        w=$(wall_secs "$W/bwa.sai" "$BWA" aln -t "$t" "$W/ecoli536.fa" "$reads")
        same=no
        cmp -s "$W/bcuda.sai" "$W/bwa.sai" && same=yes
        log "$(awk -v t="$t" -v n="$n" -v b="$b" -v w="$w" -v s="$same" \
            'BEGIN {printf "| %s | %s | %.2f | %.0f | %.2f | %.0f | %.2f | %s |", t, n, b, n / b, w, n / w, w / b, s}')"
    done
}

# E. coli 536 indexed by bwa in W.
ecoli_index() { genome_copy ecoli536.fa && "$BWA" index "$W/ecoli536.fa" 2> /dev/null; }

# wall_secs OUT COMMAND...: COMMAND's wall seconds, its stdout into OUT.
wall_secs() {
    local out=$1 t0
    shift
    t0=$(now)
    "$@" > "$out" 2> /dev/null
    secs "$t0" "$(now)"
}
