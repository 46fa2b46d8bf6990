# Sourced by bench/run: where the binaries, tools and data are, where results go, and the
# helpers every mode shares (the log, table rows, timing, the human-like genome and reads).
# ROOT (the repository) and ARGS (bench/run's arguments) are set by bench/run.

C=${BUNDLE:-$ROOT/bundle}  # what `bench/run bundle` prepares for a CUDA host
[ -d "$C/lib" ] && export LD_LIBRARY_PATH=$C/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

die() { echo "bench/run: $*" >&2; exit 2; }
require_gpu() { [ "$ALIGN" = --gpu ] || die "$MODE has no CPU form"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", b - a}'; }

# bcuda, bcuda-dev and sim_adna: from BCUDA_BIN=DIR, else the bundle, else a release build
# of this checkout (cargo, where there is one).
find_binaries() {
    if [ -n "${BCUDA_BIN:-}" ]; then
        BIN=$BCUDA_BIN
    elif [ -x "$C/bcuda" ]; then
        BIN=$C
    else
        command -v cargo > /dev/null || die "no bundle/ and no cargo: run bench/run bundle first, or set BCUDA_BIN"
        cargo build --release --quiet -p bcuda -p bcuda-dev --bins --example sim_adna || die "cargo build failed"
        BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
    fi
    B=$BIN/bcuda DEV=$BIN/bcuda-dev SIM_ADNA=$BIN/sim_adna
    [ -x "$SIM_ADNA" ] || SIM_ADNA=$BIN/examples/sim_adna
    [ -x "$B" ] || die "$B not found"
}

# bwa, dwgsim, art_illumina: the bundle's (Debian's, for hosts without them), else the PATH's.
tool() {
    if [ -x "$C/$1" ]; then echo "$C/$1"; else command -v "$1" || echo "$1"; fi
}
BWA=$(tool bwa) DWGSIM=$(tool dwgsim) ART=$(tool art_illumina)

# The commit the binaries were built from: COMMIT, else the bundle's, else this checkout's.
binaries_commit() {
    if [ -n "${COMMIT:-}" ]; then echo "$COMMIT"
    elif [ "$BIN" = "$C" ] && [ -s "$C/commit" ]; then cat "$C/commit"
    else checkout_commit
    fi
}
checkout_commit() {
    echo "$(git -C "$ROOT" rev-parse --short HEAD 2> /dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD 2> /dev/null || echo -dirty)"
}

# The GPUs' model, lower case in words ("h100-80gb-hbm3"), and their count; none without a GPU.
gpu_model() {
    command -v nvidia-smi > /dev/null || return 1
    nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1 | tr 'A-Z' 'a-z' \
        | sed 's/^nvidia //; s/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//' | grep .
}
gpu_count() { nvidia-smi -L 2> /dev/null | grep -c '^GPU'; }

# The host, as the folder of its results: h100-80gb-hbm3-16c, h200x2-32c (two GPUs), cpu-2c.
hardware_slug() {
    local model first count=
    if model=$(gpu_model); then
        first=${model%%-*}
        [ "$(gpu_count)" -gt 1 ] && count=x$(gpu_count)
        echo "$first$count${model#"$first"}-$(nproc)c"
    else
        echo "cpu-$(nproc)c"
    fi
}

# The tables' suffix: the GPU model's first word and count (h100, h200x2), or cpu with --cpu.
table_tag() {
    local model n
    if [ "$ALIGN" = --cpu ] || ! model=$(gpu_model); then echo cpu; return; fi
    n=$(gpu_count)
    echo "${model%%-*}$([ "$n" -gt 1 ] && echo "x$n")"
}

# The command as run, with the settings of the environment that change what it measures.
KNOBS="REGIME ADNA_RANDOM THREADS SORT_GB BWA_READS BWA_RUNS SIM_JOBS GPUS SWEEP ENV_SWEEP BATCH_SWEEP VARIANT
    VARIANT_ROUNDS NCU REUSE_INDEX SKIP_SWITCHES SIZE READS REPS CONFIGS CHECK GPU_CHECK FAIL_LARGE REGIMES
    LADDER_100BP LADDER_ADNA BCUDA_TEST_FIRST_PASS BCUDA_TEST_INEXACT_SWITCHES"
command_line() {
    local k line=
    for k in $KNOBS; do [ -n "${!k:-}" ] && line+="$k=$(printf %q "${!k}") "; done
    echo "${line}bench/run ${ARGS[*]}"
}

# Results: RESULTS (or --out), default bench/results, then the host's folder.
open_results() {
    HARDWARE=${HARDWARE:-$(hardware_slug)}
    RES=${RESULTS:-$ROOT/bench/results}/$HARDWARE
    mkdir -p "$RES" || die "cannot write $RES"
    TAG=$(table_tag)
    COMMIT_NOW=$(binaries_commit)
    RUN_NOTE="$(date -u +%FT%TZ), $(command_line), commit $COMMIT_NOW, $HARDWARE"
}

# The mode's log, RES/NAME-TAG.log (RES/NAME.log without a TAG), opened with a line naming the command, commit, date and
# hardware; bench/run closes it with "done".
start_log() {
    LOG=$RES/$1${TAG:+-$TAG}.log
    local gpus=
    gpu_model > /dev/null && gpus=" ($(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sort | uniq -c | sed 's/^ *//' | tr '\n' ';'))"
    echo "######## $RUN_NOTE$gpus" >> "$LOG"
    [ -n "${DETACHED_LOG:-}" ] && echo "$LOG" > "$DETACHED_LOG"
    echo "log: $LOG"
}
log() { echo "$@" | tee -a "$LOG"; }
log_stdin() { tee -a "$LOG"; }

# Appends one row to the table RES/FILE (HEADER: its columns, space-separated), made with its
# header when new; each run's rows follow a comment line with its date, command and commit.
# The row goes to the log too.
declare -A NOTED
tsv_row() {
    local name=$1 file=$RES/$1 header=$2 row
    shift 2
    [ -s "$file" ] || echo "$header" | tr ' ' '\t' > "$file"
    [ -n "${NOTED[$file]:-}" ] || echo "# $RUN_NOTE" >> "$file"
    NOTED[$file]=1
    row=$(IFS=$'\t'; echo "$*")
    echo "$row" >> "$file"
    log "row of $name: $row"
}

# Scratch: W when given, else a fresh folder; removed at the end unless KEEP_W=1.
open_scratch() {
    W=${W:-$(mktemp -d)}
    case $(realpath -m "$W") in / | "$HOME" | "$ROOT") die "W=$W: not a scratch folder" ;; esac
    mkdir -p "$W" || die "cannot make W=$W"
    export XDG_CONFIG_HOME=$W/config  # bcuda index's default-index record stays out of the home folder
    if [ -n "${KEEP_W:-}" ]; then echo "scratch kept: W=$W"; else trap 'rm -rf "$W"' EXIT; fi
}

# A detached run (bench/run --detach) holds its many-core part until `bench/run wait` says go,
# so that what runs beside the start is timed alone.
wait_for_go() { while [ -n "${WAIT_FOR:-}" ] && [ ! -e "$WAIT_FOR" ]; do sleep 1; done; }

# A figure from bcuda aln's stderr summary (NA when the summary has none, e.g. on the CPU).
from_summary() { sed -n "s/.*$1.*/\\1/p" "$2" | head -1 | grep . || echo NA; }

# The .sai's records (without the options' header of 68 bytes) of two files are the same.
same_records() { cmp -s <(tail -c +69 "$1") <(tail -c +69 "$2"); }

# Test data: the bundle's (gzip) on a CUDA host, else data/ (scripts/get-data.sh); the
# simulated reads of several lengths are made here when the bundle has none.
data_file() { # NAME (lambda.fa, ecoli536_art.fq, sim76.fq) -> a path
    if [ -s "$C/data/$1.gz" ]; then echo "$C/data/$1.gz"; return; fi
    if [[ $1 =~ ^sim([0-9]+)\.fq$ ]]; then
        local L=${BASH_REMATCH[1]}
        [ -s "$W/sim$L.fq" ] || python3 "$ROOT/scripts/sim-reads.py" "$(data_file ecoli536.fa)" "$L" 20000 "$L" > "$W/sim$L.fq"
        echo "$W/sim$L.fq"; return
    fi
    [ -s "$ROOT/data/$1" ] || "$ROOT/scripts/get-data.sh" > /dev/null || die "data/$1 missing (scripts/get-data.sh)"
    echo "$ROOT/data/$1"
}
# A plain copy of a (possibly gzip'd) FASTA in W, for bcuda and bwa to index there.
genome_copy() { gzip -dcf "$(data_file "$1")" > "$W/$1"; }

# The seeded human-like genome of SIZE Mbp (bcuda-dev synth-genome --human-like, seed 1).
human_like_genome() { # SIZE OUT
    "$DEV" synth-genome --size-mbp "$1" --seed 1 --human-like > "$2" 2> "$2.synth.log"
}

# W's genome.fa (human-like, SIZE Mbp) with its index, READS dwgsim 100 bp reads (reads.fq,
# in SIM_JOBS jobs, default 16; each job holds the genome, so use fewer on a host with little
# memory: 16 at 3.1 Gbp take 64 GB) and as many ancient-DNA reads (adna.fq, ADNA_RANDOM of them
# random), the reads made while the genome is indexed.
both_regimes_data() { # SIZE READS
    local j jobs=${SIM_JOBS:-16} counts=() t0
    human_like_genome "$1" "$W/genome.fa"
    for j in $(seq "$jobs"); do counts+=($(($2 / jobs))); done
    dwgsim_reads "$W/genome.fa" "$W/reads.fq" "${counts[@]}" &
    "$SIM_ADNA" "$W/genome.fa" "$2" 7 "${ADNA_RANDOM:-0.05}" > "$W/adna.fq" &
    t0=$(now)
    $B index -q --sort-memory "${SORT_GB:-6}" "$W/genome.fa" || { log "index failed"; return 1; }
    log "index $(secs "$t0" "$(now)") s"
    wait
}

# A regime of both_regimes_data's W: its aln options (none at 100 bp), and its reads.
regime_options() { [ "$1" = adna ] && echo "-l 1024 -n 0.01 -o 2"; }
regime_reads() { [ "$1" = adna ] && echo "$W/adna.fq" || echo "$W/reads.fq"; }

# dwgsim 100 bp single-end reads (read 1; error ramp 0.5-1.5 %, indels, 2 % random): one
# dwgsim per COUNT, seeded 7, 8, ..., run in parallel (dwgsim has one thread), concatenated
# in that order into OUT.
dwgsim_reads() { # GENOME OUT COUNT...
    local genome=$1 out=$2 j=0 n dir pids=() failed=0
    shift 2
    dir=$(mktemp -d -p "$(dirname "$out")")
    for n in "$@"; do
        "$DWGSIM" -o 1 -e 0.005-0.015 -E 0.005-0.015 -r 0.001 -R 0.1 -y 0.02 -1 100 -2 100 -N "$n" -z $((7 + j)) \
            "$genome" "$dir/dwgsim$j" > "$dir/dwgsim$j.log" 2>&1 &
        pids+=($!)
        j=$((j + 1))
    done
    for j in "${!pids[@]}"; do wait "${pids[$j]}" || { tail -5 "$dir/dwgsim$j.log" >&2; failed=1; }; done
    [ $failed = 0 ] && for j in "${!pids[@]}"; do zcat -f "$dir"/dwgsim$j.bwa.read1.fastq*; done > "$out"
    rm -rf "$dir"
    return $failed
}
