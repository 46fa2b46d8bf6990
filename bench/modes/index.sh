# bench/run index [SIZE_MBP=1000]: bcuda index --gpu against --cpu on lambda, E. coli and a
# human-like genome of SIZE_MBP Mbp (seed 1): the five files compared (lambda and E. coli
# against bwa index too), both builds timed with their peak memory, and a GPU chunk failed on
# purpose on a 50 Mbp genome (FAIL_LARGE=1: the large genome's next-to-last chunk too).
# SORT_GB: --sort-memory of both builds (default 2). Rows in index-gpu-TAG.tsv; exits 1 when
# any files differ. Log: index-gpu-TAG.log.
# bench/run --cpu index [SIZE_MBP=100]: bcuda index against bwa index, wall time and peak
# memory side by side, on E. coli 536 and scripts/synth-genome.py's genome of SIZE_MBP Mbp
# (kept in data/).
# Log: index-cpu.log.
mode_main() {
    if [ "$ALIGN" = --cpu ]; then index_against_bwa "${1:-100}"; else index_gpu_check "${1:-1000}"; fi
}

# timed MODE DIR FASTA [ENV...]: bcuda index MODE on a link to FASTA in DIR; "seconds peak_KiB" in DIR/time.
timed() {
    local mode=$1 dir=$2 fa=$3
    shift 3
    mkdir -p "$dir" && ln -sf "$(realpath "$fa")" "$dir/ref.fa"
    [[ $mode == *--sort-memory* ]] || mode="$mode --sort-memory ${SORT_GB:-2}"
    env "$@" /usr/bin/time -f "%e %M" -o "$dir/time" $B index $mode "$dir/ref.fa" > /dev/null 2> "$dir/err" \
        || { log "FAIL bcuda index $mode $* on $(basename "$fa"): $(tail -3 "$dir/err")"; echo "NA NA" > "$dir/time"; }
}
same_files() { # DIR1 DIR2 -> yes/no
    local e
    for e in pac ann amb bwt sa; do cmp -s "$1/ref.fa.$e" "$2/ref.fa.$e" || { echo no; return; }; done
    echo yes
}
# expect_same WHAT DIR1 DIR2: a line, and a failure when the files differ.
expect_same() {
    local same
    same=$(same_files "$2" "$3")
    log "$1: $same"
    [ "$same" = yes ] || FAILURES=$((FAILURES + 1))
}

# genome NAME FASTA: the GPU and CPU builds compared, one row.
genome() {
    local name=$1 fa=$2 mbp gs gk cs ck same
    mbp=$(awk '!/^>/ {n += length($0)} END {printf "%.1f", n / 1e6}' "$fa")
    timed --gpu "$W/$name-gpu" "$fa"
    timed --cpu "$W/$name-cpu" "$fa"
    read -r gs gk < "$W/$name-gpu/time"
    read -r cs ck < "$W/$name-cpu/time"
    same=$(same_files "$W/$name-gpu" "$W/$name-cpu")
    [ "$same" = yes ] || FAILURES=$((FAILURES + 1))
    grep "^\[bcuda index\]" "$W/$name-gpu/err" | grep -v "rows done" | sed "s/^/  $name GPU: /" | log_stdin
    log "$name: $mbp Mbp, GPU $gs s (peak $gk KiB), CPU build $cs s (peak $ck KiB), identical $same"
    tsv_row "index-gpu-$TAG.tsv" "genome_mbp gpu_s cpu_build_s peak_host_kib identical commit" "$mbp" "$gs" "$cs" "$gk" "$same" "$COMMIT_NOW"
}

index_gpu_check() { # SIZE
    local size=$1 g t0 chunks
    FAILURES=0
    start_log index-gpu
    log "== bcuda index --gpu vs --cpu, $(nproc) cores"
    for g in lambda ecoli536; do
        genome_copy $g.fa
        genome $g "$W/$g.fa"
        mkdir -p "$W/$g-bwa" && cp "$W/$g.fa" "$W/$g-bwa/ref.fa" && "$BWA" index "$W/$g-bwa/ref.fa" > /dev/null 2>&1
        expect_same "$g: GPU build = bwa index" "$W/$g-gpu" "$W/$g-bwa"
    done
    # A GPU chunk that fails: the CPU sorts it and the rest, with the same files. A 50 Mbp
    # human-like genome with the least sort memory (0.125 GiB: chunks of 8.4M positions, two
    # in flight), about 12 chunks, chunk 2 failed.
    human_like_genome 50 "$W/human50.fa"
    timed "--cpu --sort-memory 0.125" "$W/human50-cpu" "$W/human50.fa"
    timed "--gpu --sort-memory 0.125" "$W/fail-human50" "$W/human50.fa" BCUDA_TEST_FAIL_INDEX_CHUNK=2
    grep -h "failed on purpose\|suffixes sorted by" "$W/fail-human50/err" | log_stdin
    expect_same "human-like 50 Mbp, GPU chunk 2 failed: files = CPU build" "$W/fail-human50" "$W/human50-cpu"
    t0=$(now)
    human_like_genome "$size" "$W/human.fa"
    log "human-like $size Mbp generated in $(secs "$t0" "$(now)") s"
    wait_for_go
    genome "human$size" "$W/human.fa"
    if [ -n "${FAIL_LARGE:-}" ]; then
        chunks=$(grep -o "chunk [0-9]*/[0-9]*" "$W/human$size-gpu/err" | tail -1 | cut -d/ -f2)
        timed --gpu "$W/fail-human" "$W/human.fa" BCUDA_TEST_FAIL_INDEX_CHUNK=$((chunks - 1))
        grep -h "failed on purpose" "$W/fail-human/err" | log_stdin
        expect_same "human-like $size Mbp, GPU chunk $((chunks - 1)) of $chunks failed ($(cat "$W/fail-human/time")): files = CPU build" \
            "$W/fail-human" "$W/human$size-cpu"
    fi
    log "index GPU check: $FAILURES failures"
    [ "$FAILURES" = 0 ]
}

index_against_bwa() { # SIZE
    local size=$1 g bs bm ws wm same bases
    start_log index
    mkdir -p data
    [ -s "data/synth$size.fa" ] || python3 scripts/synth-genome.py "$size" 1 > "data/synth$size.fa"
    genome_copy ecoli536.fa
    log "| genome | bases | bcuda s | bcuda peak MiB | bwa s | bwa peak MiB | identical files |"
    log "|---|---|---|---|---|---|---|"
    for g in "$W/ecoli536.fa" "data/synth$size.fa"; do
        read -r bs bm <<< "$(measure_index bcuda "$g")"
        read -r ws wm <<< "$(measure_index bwa "$g")"
        same=$(same_files "$W/bcuda" "$W/bwa")
        bases=$(grep -v '>' "$g" | tr -d '\n' | wc -c)
        log "| $(basename "$g") | $bases | $bs | $bm | $ws | $wm | $same |"
        rm -rf "$W/bcuda" "$W/bwa"
    done
    log "(machine: $(nproc) cores; bcuda uses all of them, bwa index one)"
}
measure_index() { # TOOL GENOME -> "seconds peak_MiB"
    local dir=$W/$1 cmd secs kib
    mkdir -p "$dir" && cp "$2" "$dir/ref.fa"
    if [ "$1" = bcuda ]; then cmd=($B index -q "$dir/ref.fa"); else cmd=("$BWA" index "$dir/ref.fa"); fi
    /usr/bin/time -f "%e %M" -o "$dir/time" "${cmd[@]}" > /dev/null 2>&1
    read -r secs kib < "$dir/time"
    echo "$secs $((kib / 1024))"
}
