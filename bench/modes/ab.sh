# bench/run ab: an A/B of kernel builds and switches. A human-like genome of SIZE Mbp
# (default 1000), READS dwgsim 100 bp reads (default 4M, 16 jobs) and as many ancient-DNA
# reads, kept in W (default /tmp/bench-ab) for the next A/B; then
#   1. the GPU's .sai against the CPU's on the first 100k reads of each regime, for each
#      switch set of CHECK (BCUDA_TEST_INEXACT_SWITCHES syntax; default root_chain=1);
#   2. every config of CONFIGS ("name:build:switches[:hooks] ...", build `new` = bundle/bcuda, any
#      other BUILD = bundle/bcuda-BUILD, another build copied in by hand, e.g. bcuda-base),
#      REPS times (default 2), both regimes: wall, GPU busy and the SMs each pass held, the no-hit pass's and each pass's
#      time, the host stages' busy time, the reads left to the CPU and why (the no-hit pass: CHECK=no_hit_budget=100000 CONFIGS="off:new:
#      on:new:no_hit_budget=100000" ADNA_RANDOM=0.5 W=/tmp/bench-ab-random50, a W of its own:
#      the reads are made once per W);
#      (hooks: test hooks, e.g. BCUDA_TEST_SLOTS=8, commas between them, as are switches);
#   3. each config's .sai against the first config's;
#   4. with HEAD_READS=N (e.g. 1000000), step 2 again on the first N reads of each regime: end
#      to end, where the run's start weighs most;
#   5. with GPU_CHECK=1, bench/run identity (SKIP_SWITCHES=1), counted.
# Log: ab-TAG.log.
#   CONFIGS="base:base: new:new:" bench/run ab
mode_main() {
    require_gpu
    SIZE=${SIZE:-1000} READS=${READS:-4000000}
    local reps=${REPS:-2} configs=${CONFIGS:-"base:base: new:new:"} reg
    start_log ab
    log "SIZE=$SIZE READS=$READS CONFIGS=$configs; $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | head -1)"
    [ -s "$W/genome.fa.sa" ] || both_regimes_data "$SIZE" "$READS" || return 1
    log "reads: $(($(wc -l < "$W/reads.fq") / 4)) 100bp, $(($(wc -l < "$W/adna.fq") / 4)) adna"
    for reg in 100bp adna; do ab_check $reg; done
    ab_configs "$reps" "$configs"
    [ -z "${HEAD_READS:-}" ] || ab_head "$reps" "$configs"
    [ -z "${GPU_CHECK:-}" ] || ab_identity
}
# The genome and reads persist for the next A/B.
W=${W:-/tmp/bench-ab} KEEP_W=1


ab_check() { # REGIME
    local reg=$1 sw
    head -400000 "$(regime_reads $reg)" > "$W/c_$reg.fq"
    $B aln --cpu --quiet -t 16 $(regime_options $reg) "$W/genome.fa" "$W/c_$reg.fq" > "$W/cpu_$reg.sai"
    for sw in ${CHECK:-root_chain=1}; do
        BCUDA_TEST_INEXACT_SWITCHES=$sw $B aln --gpu --quiet -t 16 $(regime_options $reg) "$W/genome.fa" "$W/c_$reg.fq" > "$W/gpu.sai" 2> "$W/gpu.err"
        cmp -s "$W/cpu_$reg.sai" "$W/gpu.sai" && log "SAME $reg 100k $sw" || log "DIFF $reg 100k $sw $(tail -2 "$W/gpu.err")"
    done
}

ab_configs() { # REPS CONFIGS
    local rep cfg reg name build sw x t0 t1 s first
    # On the first AB_HEAD reads (ab_head): their own files and log lines.
    local part=${AB_HEAD:+_head} label=${AB_HEAD:+ first $AB_HEAD}
    for rep in $(seq "$1"); do for cfg in $2; do for reg in 100bp adna; do
        IFS=: read -r name build sw hooks <<< "$cfg"
        x=$B
        [ "$build" = new ] || x=$BIN/bcuda-$build
        s=$W/s_$reg${part}_$name
        t0=$(now)
        # shellcheck disable=SC2086 # the hooks are words: NAME=VALUE ...
        env ${hooks//,/ } BCUDA_TEST_INEXACT_SWITCHES="$sw" $x aln --gpu -t 16 $(regime_options $reg) "$W/genome.fa" "$(ab_reads $reg)" > "$s.sai" 2> "$s.err"
        t1=$(now)
        log "$reg$label $name ($build${sw:+ $sw}${hooks:+ $hooks}) rep $rep: wall $(secs "$t0" "$t1") s; $(grep -o 'busy [0-9.]* s, kernels [0-9.]* s; SMs held: [^;]*' "$s.err"); $(grep -o "over their launches' spans: [^;]*" "$s.err"); $(grep -o 'batches running kernels: [^;]*' "$s.err"); $(grep -o 'host: queueing [^;]*' "$s.err"); $(grep -o 'no-hit pass [0-9.]* ms on [0-9]* reads: [0-9]* proved' "$s.err") $(grep -o 'pass [1-4] [0-9.]* ms on [0-9]* reads' "$s.err" | tr '\n' ' ')$(grep -o 'the -m guard judged [^)]*)' "$s.err" | tr '\n' ' '); $(grep -o 'stages busy: .*' "$s.err"); $(grep -o '[0-9]* reads aligned on the CPU: [^;]*' "$s.err"); sai $(md5sum < "$s.sai" | cut -c1-8)"
    done; done; done
    first=${2%% *} first=${first%%:*}
    for reg in 100bp adna; do for cfg in $2; do
        name=${cfg%%:*}
        cmp -s "$W/s_$reg${part}_$first.sai" "$W/s_$reg${part}_$name.sai" && log "$reg$label $name: .sai = $first's" \
            || log "$reg$label $name: .sai DIFFERS from $first's"
    done; done
}

# A regime's reads: all of them, or the first AB_HEAD (ab_head).
ab_reads() { [ -n "${AB_HEAD:-}" ] && echo "$W/head_$1.fq" || regime_reads "$1"; }

ab_head() { # REPS CONFIGS
    local reg
    for reg in 100bp adna; do head -$((4 * HEAD_READS)) "$(regime_reads $reg)" > "$W/head_$reg.fq"; done
    AB_HEAD=$HEAD_READS ab_configs "$@"
}

ab_identity() {
    local out
    out=$(SKIP_SWITCHES=1 W= KEEP_W= RESULTS=${RESULTS:-$ROOT/bench/results} bench/run identity 2>&1)
    log "identity: $(grep -c '^SAME' <<< "$out") SAME, $(grep -cE '^(DIFF|FAIL)' <<< "$out") DIFF or FAIL"
}
