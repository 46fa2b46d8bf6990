# bench/run guard [SIZE_MBP=3100] [READS=200000]: the -m guard's forecast (dev/src/m_guard.rs;
# docs/gpu-search.md, "The -m guard") on the human-like benchmark, on the host's CPU (no GPU
# is used): bcuda-dev prune-bound with the ladders 2,3 and 2,3,4 on the first READS reads of
# each regime, then each read's ladder costs joined with stack-profile's, by the pass that would
# search the read (PASSES=0 leaves the join out). The genome and reads are bench/run ab's when W
# holds them (W=/tmp/bench-ab, that run's SIZE), else made here (READS of each).
# Log: guard-TAG.log.
ANY_HOST=1
W=${W:-/tmp/bench-ab} KEEP_W=1

mode_main() {
    local size=${1:-3100} reads=${2:-200000} reg
    start_log guard
    [ -s "$W/genome.fa.sa" ] || both_regimes_data "$size" "$reads" || return 1
    for reg in 100bp adna; do guard_regime "$reg" "$reads"; done
}

guard_regime() { # REGIME READS
    local reg=$1 opts fq t0
    read -ra opts <<< "$(regime_options "$reg")"
    fq=$(regime_reads "$reg")
    head -n $(($2 * 4)) "$fq" > "$W/g_$reg.fq"
    log "# $reg, $(($(wc -l < "$W/g_$reg.fq") / 4)) reads: bcuda-dev prune-bound --ladder 2,3 --ladder 2,3,4 ${opts[*]}"
    t0=$(now)
    $DEV prune-bound --ladder 2,3 --ladder 2,3,4 "${opts[@]}" --per-read "$W/g_$reg.pb" "$W/genome.fa" "$W/g_$reg.fq" \
        2>&1 | grep -v -e '^stopped by -m' -e '^    mm' | log_stdin
    log "prune-bound $(secs "$t0" "$(now)") s"
    [ "${PASSES:-1}" = 0 ] || guard_by_pass "$reg" "${opts[@]}"
}

# Each read's bwa pops and ladders' pops where exact, by whether a 32,768-entry level search
# gives up on it (pass 3 takes it) or not.
guard_by_pass() { # REGIME OPTIONS...
    local reg=$1
    shift
    $DEV stack-profile --capacity 512 --max-pops 2048 --level-capacity 32768,2100000 --last-lanes 1024 --root-chain \
        --exact-entries-limit --drop-at-push --gap-records --per-read "$W/g_$reg.per" "$@" "$W/genome.fa" "$W/g_$reg.fq" \
        > "$W/g_$reg.profile" 2>&1 || { log "stack-profile failed: $(tail -2 "$W/g_$reg.profile")"; return 1; }
    awk -F'\t' '
        FNR == 1 { if (NR == 1) for (c = 1; c <= NF; c++) if ($c == "groups_32768") col = c; next }
        NR == FNR { last[$1] = ($col == "NA"); next }
        { k = last[$1] ? "pass 3" : "passes 1-2"; n[k]++; bwa[k] += $3; l1[k] += $6; l2[k] += $7 }
        END {
            print "reads that reach\treads\tbwa pops\tladder 2,3 where exact\tratio\tladder 2,3,4\tratio"
            for (k in n) printf "%s\t%d\t%d\t%d\t%.3f\t%d\t%.3f\n", k, n[k], bwa[k], l1[k], l1[k] / bwa[k], l2[k], l2[k] / bwa[k]
        }' "$W/g_$reg.per" "$W/g_$reg.pb" | log_stdin
}
