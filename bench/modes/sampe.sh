# bench/run sampe [THREADS...]: pairs/s of bcuda sampe -t T (default 1 and every core)
# against bwa sampe (one thread) on 200,000 dwgsim pairs of E. coli 536 (insert 500 +- 50,
# 5 % random pairs, so that mate rescue runs); wall and CPU seconds (on a shared machine the
# CPU time is the steadier), the SAM records compared. A table in the log: sampe-cpu.log.
ANY_HOST=1
. bench/modes/aln.sh

mode_main() {
    local threads=("$@") args n=200000 e w wc b bc same
    [ $# -gt 0 ] || threads=(1 "$(nproc)")
    TAG=cpu
    start_log sampe
    ecoli_index
    "$DWGSIM" -z 3 -N $n -1 100 -2 100 -d 500 -s 50 -y 0.05 -r 0.002 -o 1 "$W/ecoli536.fa" "$W/pe" > /dev/null 2>&1
    for e in 1 2; do
        gzip -dc "$W/pe.bwa.read$e.fastq.gz" > "$W/pe_$e.fq"
        $B aln --cpu --quiet "$W/ecoli536.fa" "$W/pe_$e.fq" > "$W/pe_$e.sai"
    done
    args=("$W/ecoli536.fa" "$W/pe_1.sai" "$W/pe_2.sai" "$W/pe_1.fq" "$W/pe_2.fq")
    read -r w wc < <(wall_and_cpu "$BWA" sampe "${args[@]}")
    grep -v '^@PG' "$W/out.sam" > "$W/bwa.sam"
    log "| threads | pairs | bcuda s | bcuda CPU s | bcuda pairs/s | bwa s (1 thread) | bwa CPU s | bwa pairs/s | bcuda/bwa (wall) | same SAM |"
    log "|---|---|---|---|---|---|---|---|---|---|"
    for t in "${threads[@]}"; do
        read -r b bc < <(wall_and_cpu $B sampe --quiet -t "$t" "${args[@]}")
        same=no
        grep -v '^@PG' "$W/out.sam" | cmp -s - "$W/bwa.sam" && same=yes
        log "$(awk -v t="$t" -v n=$n -v b="$b" -v bc="$bc" -v w="$w" -v wc="$wc" -v s="$same" \
            'BEGIN {printf "| %s | %s | %.2f | %.2f | %.0f | %.2f | %.2f | %.0f | %.2f | %s |", t, n, b, bc, n / b, w, wc, n / w, w / b, s}')"
    done
}

# wall_and_cpu COMMAND...: "wall CPU" seconds (CPU: user + system), its SAM into W/out.sam.
wall_and_cpu() {
    /usr/bin/time -f "%e %U %S" -o "$W/time" "$@" > "$W/out.sam" 2> /dev/null
    awk '{printf "%s %.2f\n", $1, $2 + $3}' "$W/time"
}
