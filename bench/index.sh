#!/usr/bin/env bash
# Index benchmark: wall time and peak memory of `bcuda index` vs `bwa index`, side by side, on
# E. coli 536 and a seeded synthetic 100 Mbp genome (scripts/synth-genome.py).
#   bench/index.sh [SIZE_MBP]      (default 100)
# On the device machine (with .carry/ from scripts/gpu-bundle.sh; no Rust needed there):
#   bash bench/index.sh --gpu [SIZE_MBP]   (default 1000)
# the GPU sort against the CPU build (--cpu) on lambda, E. coli and a human-like genome of
# SIZE_MBP Mbp (bcuda-dev synth-genome --human-like, seed 1): the five files compared with cmp
# (lambda and E. coli also against bwa index), both timed with their peak memory, and a GPU
# chunk failed on purpose (BCUDA_TEST_FAIL_INDEX_CHUNK) on E. coli in 15 chunks (FAIL_LARGE=1:
# the next-to-last chunk of the large genome too). Rows appended to $OUT/index-gpu-h100.tsv
# (genome Mbp, GPU s, CPU-build s, peak host KiB of the GPU run, identical, commit); log in
# $OUT/index-gpu.log. Exits non-zero when any files differ. About 3 minutes at 1000 Mbp on the
# H100 host (the CPU build alone takes about 150 s there). SORT_GB: --sort-memory of both
# builds (default 2). At 3.1 Gbp it takes longer than one device command:
#   SORT_GB=6 LOG=index-gpu bash scripts/gpu-long.sh start bench/index.sh --gpu 3100
#   bash scripts/gpu-long.sh wait 585   (twice)
set -euo pipefail
cd "$(dirname "$0")/.."

gpu_index_check() {
    . scripts/device-env.sh
    set +e
    local size=${1:-1000} commit failures=0
    commit=$(cat $C/commit 2>/dev/null || echo unknown)
    local tsv=$OUT/index-gpu-h100.tsv
    [ -s "$tsv" ] || printf "genome_mbp\tgpu_s\tcpu_build_s\tpeak_host_kib\tidentical\tcommit\n" > "$tsv"
    export XDG_CONFIG_HOME=$W/config  # the default-index record stays out of the home folder
    log() { echo "$@" | tee -a "$OUT/index-gpu.log"; }
    log "== bcuda index --gpu vs --cpu, commit $commit, $(nproc) cores, $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1)"
    # timed MODE DIR FASTA [ENV...]: indexes a copy of FASTA in DIR; "seconds peak_KiB" in DIR/time.
    timed() {
        local mode=$1 dir=$2 fa=$3; shift 3
        mkdir -p "$dir"; ln -sf "$(realpath "$fa")" "$dir/ref.fa"
        [[ $mode == *--sort-memory* ]] || mode="$mode --sort-memory ${SORT_GB:-2}"
        env "$@" /usr/bin/time -f "%e %M" -o "$dir/time" $B index $mode "$dir/ref.fa" > /dev/null 2> "$dir/err" \
            || { log "FAIL bcuda index $mode $* on $(basename "$fa"): $(tail -3 "$dir/err")"; echo "NA NA" > "$dir/time"; }
    }
    same_files() { # DIR1 DIR2 -> yes/no
        for e in pac ann amb bwt sa; do cmp -s "$1/ref.fa.$e" "$2/ref.fa.$e" || { echo no; return; }; done; echo yes
    }
    genome() { # NAME FASTA: GPU and CPU builds compared, one row
        local name=$1 fa=$2 mbp gs gk cs ck same
        mbp=$(awk '!/^>/ {n += length($0)} END {printf "%.1f", n / 1e6}' "$fa")
        timed --gpu $W/$name-gpu "$fa"
        timed --cpu $W/$name-cpu "$fa"
        read -r gs gk < $W/$name-gpu/time; read -r cs ck < $W/$name-cpu/time
        same=$(same_files $W/$name-gpu $W/$name-cpu)
        [ "$same" = yes ] || failures=$((failures + 1))
        grep "^\[bcuda index\]" $W/$name-gpu/err | grep -v "rows done" | sed "s/^/  $name GPU: /" | tee -a "$OUT/index-gpu.log"
        log "$name: $mbp Mbp, GPU $gs s (peak $gk KiB), CPU build $cs s (peak $ck KiB), identical $same"
        printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$mbp" "$gs" "$cs" "$gk" "$same" "$commit" >> "$tsv"
    }
    for g in lambda ecoli536; do
        gzip -dc $C/data/$g.fa.gz > $W/$g.fa
        genome $g $W/$g.fa
        mkdir -p $W/$g-bwa && cp $W/$g.fa $W/$g-bwa/ref.fa && $C/bwa index $W/$g-bwa/ref.fa > /dev/null 2>&1
        log "$g: GPU build = bwa index: $(same_files $W/$g-gpu $W/$g-bwa)"
        [ "$(same_files $W/$g-gpu $W/$g-bwa)" = yes ] || failures=$((failures + 1))
    done
    # A GPU chunk that fails: the CPU sorts it and the rest, with the same files. E. coli in
    # 15 chunks (two of 10.7 MB each in flight), chunk 2 failed.
    timed "--gpu --sort-memory 0.01" $W/fail-ecoli $W/ecoli536.fa BCUDA_TEST_FAIL_INDEX_CHUNK=2
    grep -h "failed on purpose\|suffixes sorted by" $W/fail-ecoli/err | tee -a "$OUT/index-gpu.log"
    log "E. coli, GPU chunk 2 failed: files = CPU build: $(same_files $W/fail-ecoli $W/ecoli536-cpu)"
    [ "$(same_files $W/fail-ecoli $W/ecoli536-cpu)" = yes ] || failures=$((failures + 1))

    local t0=$(date +%s.%N)
    $DEV synth-genome --size-mbp "$size" --seed 1 --human-like > $W/human.fa 2> /dev/null
    log "human-like $size Mbp generated in $(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN {printf "%.1f", b - a}') s"
    genome human$size $W/human.fa
    if [ -n "${FAIL_LARGE:-}" ]; then
        local chunks
        chunks=$(grep -o "chunk [0-9]*/[0-9]*" $W/human$size-gpu/err | tail -1 | cut -d/ -f2)
        timed --gpu $W/fail-human $W/human.fa BCUDA_TEST_FAIL_INDEX_CHUNK=$((chunks - 1))
        grep -h "failed on purpose" $W/fail-human/err | tee -a "$OUT/index-gpu.log"
        log "human-like $size Mbp, GPU chunk $((chunks - 1)) of $chunks failed: files = CPU build: $(same_files $W/fail-human $W/human$size-cpu) ($(cat $W/fail-human/time))"
        [ "$(same_files $W/fail-human $W/human$size-cpu)" = yes ] || failures=$((failures + 1))
    fi
    log "index GPU check: $failures failures"
    log done  # the end, for scripts/gpu-long.sh
    rm -rf "$W"
    return $failures
}
if [ "${1:-}" = --gpu ]; then
    shift
    gpu_index_check "$@"
    exit $?
fi
size=${1:-100}
./scripts/get-data.sh >/dev/null
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -s "data/synth${size}.fa" ] || python3 scripts/synth-genome.py "$size" 1 > "data/synth${size}.fa"
measure() { # tool genome -> "seconds peak_MiB"
    local dir=$work/$1; mkdir -p "$dir"; cp "$2" "$dir/ref.fa"
    if [ "$1" = bcuda ]; then cmd=(target/release/bcuda index -q "$dir/ref.fa"); else cmd=(bwa index "$dir/ref.fa"); fi
    /usr/bin/time -f "%e %M" -o "$dir/time" "${cmd[@]}" >/dev/null 2>&1
    read -r secs kib < "$dir/time"
    echo "$secs $((kib / 1024))"
}
echo "| genome | bases | bcuda s | bcuda peak MiB | bwa s | bwa peak MiB | identical files |"
echo "|---|---|---|---|---|---|---|"
for g in data/ecoli536.fa "data/synth${size}.fa"; do
    read -r bs bm <<< "$(measure bcuda "$g")"
    read -r ws wm <<< "$(measure bwa "$g")"
    same=yes
    for e in pac ann amb bwt sa; do cmp -s "$work/bcuda/ref.fa.$e" "$work/bwa/ref.fa.$e" || same=no; done
    bases=$(grep -v '>' "$g" | tr -d '\n' | wc -c)
    echo "| $(basename "$g") | $bases | $bs | $bm | $ws | $wm | $same |"
    rm -rf "$work/bcuda" "$work/bwa"
done
echo "(machine: $(nproc) cores; bcuda uses all of them, bwa index one)"
