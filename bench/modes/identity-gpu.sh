# The GPU-only parts of bench/run identity (sourced by identity.sh).

# One switch set (BCUDA_TEST_INEXACT_SWITCHES syntax) on the cases most switches are checked on:
# E. coli's ART reads, 250 bp reads with -n 2 and small stacks, 36 bp reads with ancient DNA's
# options, and lambda's reads with -o 2 -e 3.
switch_cases() { # SWITCHES
    local sw=$1
    BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$(data_file ecoli536_art.fq)"
    BCUDA_TEST_INEXACT_SWITCHES=$sw BCUDA_TEST_STACKS=64,16384 check ecoli536.fa "$(data_file sim250.fq)" -n 2
    BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$(data_file sim36.fq)" -l 1024 -n 0.01 -o 2
    BCUDA_TEST_INEXACT_SWITCHES=$sw check lambda.fa "$(data_file lambda_art.fq)" -o 2 -e 3
}

# The batch's layout between host and GPU: the hits read at collect from the GPU (no host
# room), one hit slot a read (reads with more hits in the long list), both, and the codes
# unpacked where exact_match does not run (root_order; the other layout, sequence_stride=0,
# is a tuned file's: dev/tests/unpack_codes.rs checks both).
layout_paths() {
    local ecoli_art sim36 sim250
    ecoli_art=$(data_file ecoli536_art.fq) sim36=$(data_file sim36.fq) sim250=$(data_file sim250.fq)
    BCUDA_TEST_NO_HOST_ROOM=1 check ecoli536.fa "$ecoli_art"
    BCUDA_TEST_NO_HOST_ROOM=1 check ecoli536.fa "$sim36" -l 1024 -n 0.01 -o 2
    BCUDA_TEST_HITS_PER_READ=1 check ecoli536.fa "$sim36" -l 1024 -n 0.01 -o 2
    BCUDA_TEST_HITS_PER_READ=1 BCUDA_TEST_NO_HOST_ROOM=1 check ecoli536.fa "$sim36" -l 1024 -n 0.01 -o 2
    BCUDA_TEST_HITS_PER_READ=1 check demo_ref.fa testdata/demo.fq
    BCUDA_TEST_INEXACT_SWITCHES=root_order=1 check ecoli536.fa "$sim250" -n 2
}

# The GPU's paths forced by the test hooks (src/test_hooks.rs): the .sai must not change.
forced_paths() {
    local ecoli_art sim250 sim36 lambda_art stacks sw
    ecoli_art=$(data_file ecoli536_art.fq) sim250=$(data_file sim250.fq) sim36=$(data_file sim36.fq)
    lambda_art=$(data_file lambda_art.fq)
    # Small stacks (pass 1's entries per thread, the warp passes' entries per warp) send most
    # reads through the warp passes and some on to the CPU.
    for stacks in 64,16384 256,8192,32768 16,65536; do
        BCUDA_TEST_STACKS=$stacks check ecoli536.fa "$ecoli_art"
        BCUDA_TEST_STACKS=$stacks check ecoli536.fa "$sim250" -n 2
        summary_line "GPU kernels" "stacks $stacks" BCUDA_TEST_STACKS=$stacks -- "$ecoli_art"
    done
    # Pass 1's stacks side by side, 32-byte entries, pass 1's list heads in shared memory,
    # pass 1 in lockstep: with small stacks too.
    for sw in stack_interleave=1 compact_entry=0 heads_shared=1 "first_lockstep=1 heads_shared=1"; do
        BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$ecoli_art"
        BCUDA_TEST_INEXACT_SWITCHES=$sw BCUDA_TEST_STACKS=64,16384 check ecoli536.fa "$sim250" -n 2
    done
    BCUDA_TEST_INEXACT_SWITCHES=compact_entry=0 check lambda.fa "$lambda_art" -o 2 -e 3
    # The interval table: none, shallow (most mismatch and gap paths cross its edge), the
    # default and deep, with ancient DNA's options too (-l 1024 -n 0.01 -o 2).
    for sw in interval_depth=0 "interval_depth=4 gap_records=0" "interval_depth=12 gap_records=0" "interval_depth=14 gap_records=0"; do
        switch_cases "$sw"
    done
    # Pass 2 hands every read with more than one group of chains on to pass 3.
    BCUDA_TEST_INEXACT_SWITCHES=level_max_rounds=1 BCUDA_TEST_STACKS=16,65536,262144 check ecoli536.fa "$ecoli_art"
    summary_line "GPU kernels" level_max_rounds=1 BCUDA_TEST_INEXACT_SWITCHES=level_max_rounds=1 \
        BCUDA_TEST_STACKS=16,65536,262144 -- "$ecoli_art"
    # bwa's -m reached inside a group of chains (-m 300): the team passes find where bwa stops
    # (entries_limit_exact, the default), or without it the CPU takes those reads; teams of one
    # warp in both team passes, and pass 2's teams of two warps.
    for sw in "" "entries_limit_exact=0" "level_team_lanes=32 last_team_lanes=32" "level_team_lanes=64"; do
        BCUDA_TEST_STACKS=16,65536,262144 BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$ecoli_art" -m 300
        summary_line "reads aligned on the CPU" "[$sw]" BCUDA_TEST_STACKS=16,65536,262144 \
            "BCUDA_TEST_INEXACT_SWITCHES=$sw" -- -m 300 "$ecoli_art"
    done
    # Pass 2's lanes refilled from their level (level_refill): pools small enough to drop
    # levels and hand reads on, -m 300 (a segment that may cross it hands its read on), one
    # group a read, ancient DNA's options and -e.
    for stacks in 16,2048,262144 16,65536,262144; do
        BCUDA_TEST_INEXACT_SWITCHES="level_refill=1 gap_records=0" BCUDA_TEST_STACKS=$stacks check ecoli536.fa "$ecoli_art"
        BCUDA_TEST_INEXACT_SWITCHES="level_refill=1 gap_records=0" BCUDA_TEST_STACKS=$stacks check ecoli536.fa "$sim250" -n 2
    done
    BCUDA_TEST_INEXACT_SWITCHES="level_refill=1 gap_records=0" BCUDA_TEST_STACKS=16,65536,262144 check ecoli536.fa "$ecoli_art" -m 300
    BCUDA_TEST_INEXACT_SWITCHES="level_refill=1 level_max_rounds=1 gap_records=0" BCUDA_TEST_STACKS=16,65536,262144 \
        check ecoli536.fa "$ecoli_art"
    BCUDA_TEST_INEXACT_SWITCHES="level_refill=1 gap_records=0" check ecoli536.fa "$sim36" -l 1024 -n 0.01 -o 2
    BCUDA_TEST_INEXACT_SWITCHES="level_refill=1 gap_records=0" check lambda.fa "$lambda_art" -o 2 -e 3
    summary_line "GPU kernels" level_refill=1 BCUDA_TEST_INEXACT_SWITCHES="level_refill=1 gap_records=0" \
        BCUDA_TEST_STACKS=16,2048,262144 -- "$ecoli_art"
    # Occurrence counts from sectors (occ_sectors), with one-row intervals read once, small
    # stacks, ancient DNA's options, -e and -m 300.
    for sw in occ_sectors=1 "occ_sectors=1 occ_singleton=1"; do
        switch_cases "$sw"
    done
    BCUDA_TEST_INEXACT_SWITCHES=occ_sectors=1 BCUDA_TEST_STACKS=16,65536,262144 check ecoli536.fa "$ecoli_art" -m 300
    # Two sets of the passes' scratch (scratch_sets=2), batches alternating between them, with
    # small batches and small stacks so that every pass runs in each.
    BCUDA_TEST_INEXACT_SWITCHES=scratch_sets=2 BCUDA_TEST_BATCH_READS=8192 check ecoli536.fa "$ecoli_art"
    BCUDA_TEST_INEXACT_SWITCHES=scratch_sets=2 BCUDA_TEST_BATCH_READS=8192 BCUDA_TEST_STACKS=16,2048,262144 \
        check ecoli536.fa "$ecoli_art"
    BCUDA_TEST_INEXACT_SWITCHES=scratch_sets=2 BCUDA_TEST_BATCH_READS=4096 check ecoli536.fa "$sim36" -l 1024 -n 0.01 -o 2
    # The team passes' push buffers interleaved (lane_interleave): small pools, -m 300 (the
    # pushes' pops, entries_limit_exact), segments, ancient DNA's options.
    BCUDA_TEST_INEXACT_SWITCHES=lane_interleave=1 BCUDA_TEST_STACKS=16,2048,262144 check ecoli536.fa "$ecoli_art"
    BCUDA_TEST_INEXACT_SWITCHES=lane_interleave=1 BCUDA_TEST_STACKS=16,65536,262144 check ecoli536.fa "$ecoli_art" -m 300
    BCUDA_TEST_INEXACT_SWITCHES="lane_interleave=1 level_refill=1 last_refill=1 gap_records=0" BCUDA_TEST_STACKS=16,65536,262144 \
        check ecoli536.fa "$sim250" -n 2
    BCUDA_TEST_INEXACT_SWITCHES=lane_interleave=1 check ecoli536.fa "$sim36" -l 1024 -n 0.01 -o 2
    # Three batches in flight, small batches: the same .sai on every batch.
    BCUDA_TEST_SLOTS=3 BCUDA_TEST_BATCH_READS=8192 check ecoli536.fa "$ecoli_art"
}

# Occurrence sectors asked for ahead of their pops (occ_prefetch: the matching child's into L1
# or L2, every child's into L2), with bwa's array too, small stacks, ancient DNA's options, -e
# and -m 300; the sectors marked to leave L1 first or not kept there, and the pushes to stay
# (occ_l1): hints, so the .sai must not move.
prefetch_paths() {
    local sw
    for sw in occ_prefetch=1 occ_prefetch=2 occ_prefetch=3 "occ_prefetch=3 occ_sectors=0" occ_l1=1 occ_l1=2 occ_l1=3; do
        switch_cases "$sw"
    done
    for sw in occ_prefetch=3 occ_l1=3; do
        BCUDA_TEST_INEXACT_SWITCHES=$sw BCUDA_TEST_STACKS=16,65536,262144 check ecoli536.fa "$(data_file ecoli536_art.fq)" -m 300
    done
}

# Pushes above the pool's cap counted at the push (drop_at_push): the option sets of
# switch_cases, small pools that drop scores and hand reads on, and -m 300, where groups near -m
# store every push for entries_limit_inside.
drop_paths() {
    switch_cases drop_at_push=1
    BCUDA_TEST_INEXACT_SWITCHES=drop_at_push=1 BCUDA_TEST_STACKS=16,4096,65536 check ecoli536.fa "$(data_file ecoli536_art.fq)"
    BCUDA_TEST_INEXACT_SWITCHES=drop_at_push=1 BCUDA_TEST_STACKS=16,65536,262144 check ecoli536.fa "$(data_file ecoli536_art.fq)" -m 300
}

# Gap records (gap_records, on by default): each pop's gap children stored as one item and
# expanded when the search reaches their score. Off, on without drop_at_push, small pools
# (records dropped, levels that cannot expand: hand-ons), -m 300 (the exact -m rule counting a
# record's children), and -o 2 -e 4 (gap extensions without -e's gap counting).
records_paths() {
    switch_cases gap_records=0
    switch_cases "gap_records=1 drop_at_push=0"
    BCUDA_TEST_INEXACT_SWITCHES=gap_records=1 BCUDA_TEST_STACKS=16,4096,65536 check ecoli536.fa "$(data_file ecoli536_art.fq)"
    BCUDA_TEST_INEXACT_SWITCHES=gap_records=1 BCUDA_TEST_STACKS=16,65536,262144 check ecoli536.fa "$(data_file ecoli536_art.fq)" -m 300
    BCUDA_TEST_INEXACT_SWITCHES=gap_records=1 BCUDA_TEST_STACKS=64,4096 check ecoli536.fa "$(data_file sim250.fq)" -n 2 -o 2 -e 4
    BCUDA_TEST_INEXACT_SWITCHES=gap_records=1 BCUDA_TEST_STACKS=16,2048,65536 check ecoli536.fa "$(data_file sim36.fq)" -l 1024 -n 0.01 -o 2
}

# Chains two pops a lookup from the pair sectors (occ_pairs): pass 2 alone, passes 1 and 2,
# every pass; every pass with small stacks (passes 2 and 3 take most reads, some go on to the
# CPU), with -m 300, long reads and ancient DNA's options; and with segments (level_refill).
pairs_paths() {
    local ecoli_art
    ecoli_art=$(data_file ecoli536_art.fq)
    for v in 1 2 3; do switch_cases occ_pairs=$v; done
    BCUDA_TEST_INEXACT_SWITCHES=occ_pairs=3 BCUDA_TEST_STACKS=16,4096,65536 check ecoli536.fa "$ecoli_art"
    BCUDA_TEST_INEXACT_SWITCHES=occ_pairs=3 BCUDA_TEST_STACKS=16,65536,262144 check ecoli536.fa "$ecoli_art" -m 300
    BCUDA_TEST_INEXACT_SWITCHES=occ_pairs=3 BCUDA_TEST_STACKS=64,4096 check ecoli536.fa "$(data_file sim250.fq)" -n 2 -o 2 -e 4
    BCUDA_TEST_INEXACT_SWITCHES=occ_pairs=3 BCUDA_TEST_STACKS=16,2048,65536 check ecoli536.fa "$(data_file sim36.fq)" -l 1024 -n 0.01 -o 2
    switch_cases "occ_pairs=3 level_refill=1 gap_records=0"
}

# The team passes' queues heaviest first (level_order 1: pass 2's, 2: every team pass's, the
# default; 0: none): the option sets of switch_cases; small stacks, so that pass 1 hands on
# most reads (some with more hits than its slots) and the last pass and the CPU take some, with
# -m 300 and ancient DNA's options; with a middle pass; with the no-hit proof before the last
# pass (which takes reads out of the last queue before it is sorted); without root chains (no
# weights: no order).
order_paths() {
    local ecoli_art v
    ecoli_art=$(data_file ecoli536_art.fq)
    for v in 0 1 2; do
        switch_cases level_order=$v
        BCUDA_TEST_INEXACT_SWITCHES=level_order=$v BCUDA_TEST_STACKS=16,4096,65536 check ecoli536.fa "$ecoli_art"
        BCUDA_TEST_INEXACT_SWITCHES=level_order=$v BCUDA_TEST_STACKS=16,65536,262144 check ecoli536.fa "$ecoli_art" -m 300
        BCUDA_TEST_INEXACT_SWITCHES=level_order=$v BCUDA_TEST_STACKS=16,2048,65536 check ecoli536.fa "$(data_file sim36.fq)" -l 1024 -n 0.01 -o 2
    done
    BCUDA_TEST_INEXACT_SWITCHES="level_order=2 mid_team_lanes=128" BCUDA_TEST_STACKS=16,2048,8192,262144 check ecoli536.fa "$ecoli_art"
    BCUDA_TEST_INEXACT_SWITCHES="level_order=2 proof_before_last=1" BCUDA_TEST_STACKS=16,2048,65536 check ecoli536.fa "$(data_file sim36.fq)" -l 1024 -n 0.01 -o 2
    BCUDA_TEST_INEXACT_SWITCHES="level_order=2 root_chain=0" BCUDA_TEST_STACKS=16,4096,65536 check ecoli536.fa "$ecoli_art"
}

# The ladder's rungs in the team passes (BCUDA_TEST_LADDER, a test hook; src/gpu/rungs.rs) with
# the -m guard: bwa's answers whatever -m, which 300, 2000 and 20000 make bind on E. coli's reads
# (the guard then proves fewer answers, and their reads go on to bwa's search).
ladder_paths() {
    local ecoli_art sim36 sim150 m
    ecoli_art=$(data_file ecoli536_art.fq) sim36=$(data_file sim36.fq) sim150=$(data_file sim150.fq)
    for m in 2000000 20000 2000 300; do
        BCUDA_TEST_LADDER=passes,2,3 check ecoli536.fa "$ecoli_art" -m $m
        BCUDA_TEST_LADDER=passes,2,3 check ecoli536.fa "$sim150" -m $m
        BCUDA_TEST_LADDER=passes,2,3 check ecoli536.fa "$sim36" -l 1024 -n 0.01 -o 2 -m $m
    done
    BCUDA_TEST_LADDER=passes,2,3 BCUDA_TEST_STACKS=16,2048,65536 check ecoli536.fa "$ecoli_art" -m 20000
    BCUDA_TEST_LADDER=passes,2,3,4 check ecoli536.fa "$sim36" -l 1024 -n 0.01 -o 2
    BCUDA_TEST_LADDER=passes,2,3 check lambda.fa "$(data_file lambda_art.fq)" -o 2 -e 3
}

# A middle team pass (mid_team_lanes) between pass 2 and the last: teams of 128 (and of 64, at
# 8 an SM) on the option sets of switch_cases; four forced pools small enough that pass 2 hands
# reads to the middle pass and it hands some on to the last, with -m 300 (bwa's -m reached in the
# middle pass), -n 2 and ancient DNA's options; and pass 2 handing on every read after one group
# (level_max_rounds=1), which the middle pass does not do.
middle_paths() {
    local ecoli_art sw stacks=16,2048,8192,262144
    ecoli_art=$(data_file ecoli536_art.fq)
    switch_cases mid_team_lanes=128
    switch_cases "mid_team_lanes=64 mid_teams_per_sm=8"
    for sw in mid_team_lanes=128 "mid_team_lanes=256 mid_teams_per_sm=2"; do
        BCUDA_TEST_INEXACT_SWITCHES=$sw BCUDA_TEST_STACKS=$stacks check ecoli536.fa "$ecoli_art"
        BCUDA_TEST_INEXACT_SWITCHES=$sw BCUDA_TEST_STACKS=$stacks check ecoli536.fa "$ecoli_art" -m 300
        BCUDA_TEST_INEXACT_SWITCHES=$sw BCUDA_TEST_STACKS=$stacks check ecoli536.fa "$(data_file sim250.fq)" -n 2
        BCUDA_TEST_INEXACT_SWITCHES=$sw BCUDA_TEST_STACKS=16,1024,4096,65536 check ecoli536.fa "$(data_file sim36.fq)" \
            -l 1024 -n 0.01 -o 2
    done
    BCUDA_TEST_INEXACT_SWITCHES="mid_team_lanes=128 level_max_rounds=1" BCUDA_TEST_STACKS=16,65536,131072,262144 \
        check ecoli536.fa "$ecoli_art"
    summary_line "GPU kernels" "middle pass, stacks $stacks" BCUDA_TEST_INEXACT_SWITCHES=mid_team_lanes=128 \
        BCUDA_TEST_STACKS=$stacks -- "$ecoli_art"
}

# Pass 1's order from the root chains, exact_match not run (root_order): bwa's option sets
# (gzip, mixed lengths, -N, -R, -m), small stacks, with the no-hit pass (which reads the same
# order), and with the replay (which needs exact_match, so it runs).
root_order_paths() {
    local sw=root_order=1 ecoli_art
    ecoli_art=$(data_file ecoli536_art.fq)
    BCUDA_TEST_INEXACT_SWITCHES=$sw options_paths
    BCUDA_TEST_INEXACT_SWITCHES=$sw BCUDA_TEST_STACKS=64,16384 check ecoli536.fa "$ecoli_art"
    BCUDA_TEST_INEXACT_SWITCHES=$sw BCUDA_TEST_STACKS=16,65536,262144 check ecoli536.fa "$(data_file sim36.fq)" \
        -l 1024 -n 0.01 -o 2
    BCUDA_TEST_INEXACT_SWITCHES="$sw no_hit_budget=100000" check ecoli536.fa "$(data_file sim36.fq)" -l 1024 -n 0.01 -o 2
    BCUDA_TEST_INEXACT_SWITCHES="$sw exact_replay=1" check ecoli536.fa "$ecoli_art"
    summary_line "GPU kernels" root_order=1 BCUDA_TEST_INEXACT_SWITCHES=$sw -- "$ecoli_art"
}

# The no-hit pass (no_hit_budget): reads it proves to have no alignment get 0 hits without the
# search, the rest go on. Ancient-DNA reads of E. coli with half of them random (environmental
# DNA), with ancient DNA's options, bwa's defaults and -e (gap extensions beyond -n); a limit of
# 200 lookups, at which most proofs give up; mapped reads with the passes' stacks small.
no_hit_paths() {
    local adna=$W/adna_half_random.fq sw ecoli_art
    ecoli_art=$(data_file ecoli536_art.fq)
    "$SIM_ADNA" "$W/ecoli536.fa" 20000 7 0.5 > "$adna" || { fail "sim_adna"; return; }
    for sw in no_hit_budget=100000 no_hit_budget=200; do
        BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$adna" -l 1024 -n 0.01 -o 2
        BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$adna"
    done
    BCUDA_TEST_INEXACT_SWITCHES=no_hit_budget=100000 check ecoli536.fa "$adna" -n 2 -o 1 -e 3
    BCUDA_TEST_INEXACT_SWITCHES=no_hit_budget=100000 BCUDA_TEST_STACKS=64,16384 check ecoli536.fa "$ecoli_art"
    BCUDA_TEST_INEXACT_SWITCHES="no_hit_budget=100000 first_lockstep=1" check ecoli536.fa "$(data_file sim36.fq)" -l 1024 -n 0.01 -o 2
    summary_line "GPU kernels" no_hit_budget=100000 BCUDA_TEST_INEXACT_SWITCHES=no_hit_budget=100000 -- \
        -l 1024 -n 0.01 -o 2 "$adna"
}

# The reads that occur whole through the candidates and the replay (exact_replay): bwa's
# option sets (-N and -m 300 turn it off, -R and seeds change which hits bwa keeps), ancient
# DNA's options, -e, small stacks (the reads it hands on go through every pass), bwa's array
# instead of the sectors, the interval table, and small batches on two scratch sets.
exact_replay_paths() {
    local ecoli_art lambda_art sw=exact_replay=1 opts
    ecoli_art=$(data_file ecoli536_art.fq) lambda_art=$(data_file lambda_art.fq)
    for opts in "" "-n 2" "-o 0" "-l 25 -k 1" "-R 5" "-N" "-R 1 -k 0"; do
        BCUDA_TEST_INEXACT_SWITCHES=$sw check lambda.fa "$lambda_art" $opts
    done
    switch_cases "$sw"
    BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$ecoli_art" -m 300
    BCUDA_TEST_INEXACT_SWITCHES="$sw occ_sectors=0" check ecoli536.fa "$ecoli_art"
    BCUDA_TEST_INEXACT_SWITCHES="$sw interval_depth=10 gap_records=0" check ecoli536.fa "$ecoli_art"
    BCUDA_TEST_INEXACT_SWITCHES="$sw scratch_sets=2" BCUDA_TEST_BATCH_READS=4096 check ecoli536.fa "$ecoli_art"
    summary_line "GPU kernels" exact_replay=1 BCUDA_TEST_INEXACT_SWITCHES=$sw -- "$ecoli_art"
}

# The no-hit proof before the last pass (proof_before_last): ancient-DNA reads of E. coli half
# random with ancient DNA's options, bwa's defaults and -e; small pools, which send many reads to
# the last pass; -m 300 (two passes: the proof before pass 2), -N, and with the replay too.
proof_paths() {
    local adna=$W/adna_half_random.fq sw=proof_before_last=1 ecoli_art sim250
    ecoli_art=$(data_file ecoli536_art.fq) sim250=$(data_file sim250.fq)
    [ -s "$adna" ] || "$SIM_ADNA" "$W/ecoli536.fa" 20000 7 0.5 > "$adna" || { fail "sim_adna"; return; }
    BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$adna" -l 1024 -n 0.01 -o 2
    BCUDA_TEST_STACKS=64,2048,262144 BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$adna" -l 1024 -n 0.01 -o 2
    BCUDA_TEST_STACKS=64,2048,262144 BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$adna"
    BCUDA_TEST_STACKS=64,2048,262144 BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$adna" -n 2 -o 1 -e 3
    BCUDA_TEST_STACKS=64,2048,262144 BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$ecoli_art" -m 300
    BCUDA_TEST_STACKS=64,2048,262144 BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa "$sim250" -n 2 -N
    BCUDA_TEST_STACKS=64,2048,262144 BCUDA_TEST_INEXACT_SWITCHES="$sw exact_replay=1 occ_sectors=0" \
        check ecoli536.fa "$adna" -l 1024 -n 0.01 -o 2
    summary_line "GPU kernels" proof_before_last=1 BCUDA_TEST_STACKS=64,2048,262144 \
        BCUDA_TEST_INEXACT_SWITCHES=$sw -- -l 1024 -n 0.01 -o 2 "$adna"
}

# summary_line PATTERN LABEL ENV... -- [OPTIONS...] READS: the summary's line matching
# PATTERN of a GPU run on E. coli with the test hooks ENV, into the log under LABEL.
summary_line() {
    local pattern=$1 label=$2 env=()
    shift 2
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    local reads=${*: -1} opts=("${@:1:$#-1}")
    env "${env[@]}" $B aln --gpu -t "$T" "${opts[@]}" "$W/ecoli536.fa" "$reads" 2>&1 > /dev/null \
        | grep "$pattern" | sed "s/^/  $label: /" | log_stdin
}

start_up() {
    log "== start-up: one read, first run (NVRTC compile) and second run (kernel cache)"
    head -4 testdata/demo.fq > "$W/one.fq"
    local run t0
    for run in first second; do
        t0=$(now)
        $B aln --gpu --quiet "$W/ecoli536.fa" "$W/one.fq" > /dev/null
        log "$run: $(secs "$t0" "$(now)") s"
    done
}

# exact_match alone (kernel time from GPU events) on 1M ART reads (10 x ecoli536_art), then
# with each switch flipped from BarraCUDA's defaults (SKIP_SWITCHES=1 skips these).
kernel_alone() {
    log "== exact_match alone (kernel time from GPU events), 1M ART reads = 10 x ecoli536_art"
    local i sw a args
    for i in $(seq 10); do zcat -f "$(data_file ecoli536_art.fq)"; done > "$W/big.fq"
    $DEV gpu-bench "$W/ecoli536.fa" "$W/big.fq" 2>&1 | log_stdin
    [ -z "${SKIP_SWITCHES:-}" ] || return 0
    log "== exact_match with each switch flipped from BarraCUDA's defaults (same reads, intervals checked)"
    for sw in "BLOCK_W=128" "BLOCK_W=256" "kl_par=1" "many_blocks=1" "direct_sequence=0" "direct_index=0" "sequence_global=0" \
        "sequence_shift81=0" "sequence_stride=0" "mycache4=0 mycache2=1" "mycache4=0" "direct_global_bwt=1" \
        "cache_global_bwt=0" "scache_global_bwt=1" "cache_threads=1" "cache_threads=4" "cache_threads=8 occ_par=1" \
        "cache_threads=32 occ_par=1"; do
        args=()
        for a in $sw; do args+=(--switch "$a"); done
        log "$($DEV gpu-bench --repeats 3 "${args[@]}" "$W/ecoli536.fa" "$W/big.fq" 2>&1 | grep -E "switches|reads/s|differing|error" | tr '\n' ' ')"
    done
}

# Whole aln on the 1M reads: bcuda --gpu vs bcuda --cpu vs bwa aln, timed and compared; then
# failed batches and a dead GPU, which the CPU (or the other GPUs) must make up for.
million_reads() {
    local big=$W/big.fq t0 t1 t2 t3 n
    log "== whole aln on the same 1M reads: bcuda --gpu vs bcuda --cpu -t $T vs bwa aln -t $T"
    t0=$(now)
    $B aln --gpu -t "$T" "$W/ecoli536.fa" "$big" > "$W/big_gpu.sai" 2> "$W/gpu_summary.txt"
    t1=$(now)
    log_stdin < "$W/gpu_summary.txt"
    $B aln --cpu --quiet -t "$T" "$W/ecoli536.fa" "$big" > "$W/big_cpu.sai"
    t2=$(now)
    "$BWA" aln -t "$T" "$W/ecoli536.fa" "$big" > "$W/big_bwa.sai" 2> /dev/null
    t3=$(now)
    n=$(($(wc -l < "$big") / 4))
    awk -v n="$n" -v t="$T" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
        print "| run | reads | seconds | reads/s | vs bwa -t " t " |\n|---|---|---|---|---|"
        split("bcuda aln --gpu;bcuda aln --cpu -t " t ";bwa aln -t " t, name, ";")
        s[1] = b - a; s[2] = c - b; s[3] = d - c
        for (i = 1; i <= 3; i++) printf "| %s | %d | %.2f | %.0f | %.2fx |\n", name[i], n, s[i], n / s[i], s[3] / s[i]
    }' | log_stdin
    cmp -s "$W/big_gpu.sai" "$W/big_cpu.sai"
    verdict $? "1M-read .sai: GPU = CPU"
    same_records "$W/big_cpu.sai" "$W/big_bwa.sai"
    verdict $? "1M-read .sai records: bcuda = bwa"
    # A GPU batch that fails (the second, on purpose) is aligned on the CPU; with three
    # batches in flight too.
    BCUDA_TEST_FAIL_BATCH=2 $B aln --gpu -t "$T" "$W/ecoli536.fa" "$big" > "$W/big_fail.sai" 2> "$W/fail.err"
    grep -h "failed on purpose" "$W/fail.err" | log_stdin
    cmp -s "$W/big_fail.sai" "$W/big_cpu.sai"
    verdict $? "1M reads, GPU batch 2 failed: .sai = CPU"
    BCUDA_TEST_SLOTS=3 BCUDA_TEST_FAIL_BATCH=2 $B aln --gpu -t "$T" "$W/ecoli536.fa" "$big" > "$W/big_fail3.sai" 2> /dev/null
    cmp -s "$W/big_fail3.sai" "$W/big_cpu.sai"
    verdict $? "1M reads, 3 batches in flight, GPU batch 2 failed: .sai = CPU"
    # A GPU that fails every batch from the second on is given up after 3 in a row; the others
    # (the CPU, on one GPU) take the rest. With several GPUs: GPU 1 dies, GPU 0 goes on.
    BCUDA_TEST_FAIL_GPU=$([ "$(gpu_count)" -gt 1 ] && echo 1 || echo 0) BCUDA_TEST_FAIL_BATCH=2.. \
        $B aln --gpu -t "$T" "$W/ecoli536.fa" "$big" > "$W/big_dead.sai" 2> "$W/dead.err"
    grep -h "given up\|^\[bcuda aln\] GPU [0-9]* (" "$W/dead.err" | log_stdin
    cmp -s "$W/big_dead.sai" "$W/big_cpu.sai"
    verdict $? "1M reads, a GPU dead from batch 2: .sai = CPU"
}
