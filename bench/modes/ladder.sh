# bench/run ladder [READS]: what the speculative ladder (docs/gpu-search.md, "The -m guard")
# would cost the GPU, played with whole aln runs before the kernels run it. On bench/run ab's
# genome and reads (W, default /tmp/bench-ab; made here at SIZE Mbp, default 3100, where W has
# none), the first READS reads of each regime (default all):
#   1. bwa's search: aln with the regime's options;
#   2. the rungs: aln -n 1 on the reads that occur whole (from 1.'s .sai), then -n 2, -n 3
#      (and -n 4 in ancient DNA: LADDER_100BP, LADDER_ADNA) each on the reads the rung before
#      left (bcuda-dev ladder-split), then the regime's options on the rest;
#   3. every rung's answered reads checked against 1.'s records (the ladder without the guard
#      is exact where bwa's -m does not stop a search);
#   4. GPU busy, kernel time and the SM-seconds each pass held, for 1. and summed over 2.
# The rungs' sums hold each run's start (exact_match, the D arrays) once a run, which a ladder
# in the kernels would not repeat. BCUDA_TEST_FIRST_PASS=teams gives every run's reads to the
# team passes (pass 1's rule keeps a rung's reads, few of which it hands on); REGIMES picks
# the regimes (default "100bp adna"). Log: ladder-TAG.log.
W=${W:-/tmp/bench-ab} KEEP_W=1

mode_main() {
    local reg
    start_log ladder
    [ -s "$W/genome.fa.sa" ] || both_regimes_data "${SIZE:-3100}" "${READS:-8000000}" || return 1
    for reg in ${REGIMES:-100bp adna}; do ladder_regime "$reg" "${1:-}"; done
}

ladder_regime() { # REGIME [READS]
    local reg=$1 d=$W/ladder_$1 fq opts rungs=${LADDER_100BP:-2 3} g prev=r1
    read -ra opts <<< "$(regime_options "$reg")"
    fq=$(regime_reads "$reg")
    [ "$reg" = adna ] && rungs=${LADDER_ADNA:-2 3 4}
    rm -rf "$d" && mkdir -p "$d"
    if [ -n "$2" ]; then head -n $(($2 * 4)) "$fq" > "$d/reads.fq" && fq=$d/reads.fq; fi
    log "# $reg, $(($(wc -l < "$fq") / 4)) reads, ${opts[*]:-default options}; ladder 1 (reads that occur whole), then $rungs, then bwa's search"
    ladder_aln "$d" full "$fq" "${opts[@]}" || return 1
    ladder_split "$d" 1 "$fq" "$d/full.sai" --answered "$d/w1.fq" --answered-ids "$d/w1.ids" --rest "$d/r1.fq" --rest-ids "$d/r1.ids"
    ladder_aln "$d" g1 "$d/w1.fq" $(rung_options 1 "${opts[@]}") || return 1
    ladder_split "$d" 1 "$d/w1.fq" "$d/g1.sai" --ids "$d/w1.ids" --bwa "$d/full.sai" --rest "$d/none.fq"
    for g in $rungs; do
        ladder_aln "$d" "g$g" "$d/$prev.fq" $(rung_options "$g" "${opts[@]}") || return 1
        ladder_split "$d" "$g" "$d/$prev.fq" "$d/g$g.sai" --ids "$d/$prev.ids" --bwa "$d/full.sai" --rest "$d/r$g.fq" --rest-ids "$d/r$g.ids"
        prev=r$g
    done
    ladder_aln "$d" last "$d/$prev.fq" "${opts[@]}" || return 1
    ladder_split "$d" 1000 "$d/$prev.fq" "$d/last.sai" --ids "$d/$prev.ids" --bwa "$d/full.sai" --rest "$d/none.fq"
    ladder_sums "$d"
}

# The regime's options with -n G.
rung_options() { # G OPTIONS...
    local g=$1
    shift
    [ "$#" -gt 0 ] && echo "$*" | sed "s/-n [0-9.]*/-n $g/" || echo "-n $g"
}

# One aln run: its .sai in D/NAME.sai, and a line of D/times: name, reads, wall, GPU busy,
# kernels, and each pass's SM-seconds (busy x the SMs it held) and kernel ms.
ladder_aln() { # D NAME READS OPTIONS...
    local d=$1 name=$2 fq=$3 t0 t1 e
    shift 3
    e=$d/$name.err
    t0=$(now)
    $B aln "$ALIGN" -t 16 "$@" "$W/genome.fa" "$fq" > "$d/$name.sai" 2> "$e" || { log "aln $name failed: $(tail -2 "$e")"; return 1; }
    t1=$(now)
    echo "$name $(($(wc -l < "$fq") / 4)) $(secs "$t0" "$t1") $(ladder_fields "$e")" >> "$d/times"
    log "$name ($*): $(($(wc -l < "$fq") / 4)) reads, wall $(secs "$t0" "$t1") s; $(grep -o 'busy [0-9.]* s, kernels [0-9.]* s; SMs held: [^;]*' "$e"); $(grep -o 'pass [1-4] [0-9.]* ms on [0-9]* reads' "$e" | tr '\n' ' ')"
}

# busy, kernels, the SM-seconds of passes 1-3, and passes 1-3's kernel ms from a summary (NA on
# the CPU).
ladder_fields() { # ERR
    local busy kernels p ms=()
    busy=$(from_summary 'busy \([0-9.]*\) s, kernels' "$1")
    kernels=$(from_summary 'kernels \([0-9.]*\) s; SMs' "$1")
    for p in 1 2 3; do
        ms+=("$(from_summary "pass $p \\([0-9.]*\\) ms on" "$1")")
        echo -n "$(awk -v b="$busy" -v s="$(from_summary "SMs held: [^;]*pass $p \\([0-9]*\\) %" "$1")" \
            'BEGIN { if (b == "NA" || s == "NA") print "NA"; else printf "%.3f", b * s / 100 }') "
    done
    echo "$busy $kernels ${ms[*]}"
}

ladder_split() { # D G READS SAI SPLIT-OPTIONS...
    local d=$1 g=$2 fq=$3 sai=$4
    shift 4
    $DEV ladder-split "${opts[@]}" --g "$g" "$@" "$fq" "$sai" 2>&1 | log_stdin
}

# bwa's search against the ladder's runs summed.
ladder_sums() { # D
    awk '
        function add(k, f) { for (f = 3; f <= NF; f++) s[k, f] += ($f == "NA") ? 0 : $f; n[k]++ }
        $1 == "full" { add("bwa") ; next }
        { add("ladder") }
        END {
            for (k in n) {
                printf "%s\t%d", k, n[k]
                printf "\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\t%.1f\n", s[k, 3], s[k, 4], s[k, 5], s[k, 6], s[k, 7], s[k, 8], s[k, 9], s[k, 10], s[k, 11]
            }
        }' "$1/times" | sort | { echo "search	runs	wall s	pass 1 SM-s	pass 2 SM-s	pass 3 SM-s	GPU busy s	kernels s	pass 1 ms	pass 2 ms	pass 3 ms"; cat; } | log_stdin
}
