# bench/run large [SIZE_MBP=500]: scripts/synth-genome.py's seeded genome of SIZE_MBP Mbp
# (random sequence with a few repeat families; the benchmark before the human-like one, kept
# so that its numbers stay comparable), indexed by bcuda (--sort-memory SORT_GB GiB, default
# 2) while 1M 100 bp reads are simulated (scripts/sim-reads.py); then exact_match alone, the
# GPU's .sai against the CPU's on the first 100k reads, and whole aln twice against bwa aln
# -t 16 on bcuda's index, the .sai records compared. Log: gpu-large-TAG.log.
mode_main() {
    require_gpu
    local size=${1:-500} sort_gb=${SORT_GB:-2} t0 sim s1 s2
    start_log gpu-large
    t0=$(now)
    python3 scripts/synth-genome.py "$size" 1 > "$W/synth.fa"
    log "genome: $size Mbp generated in $(secs "$t0" "$(now)") s"
    wait_for_go
    python3 scripts/sim-reads.py "$W/synth.fa" 100 1000000 7 > "$W/reads.fq" &
    sim=$!
    /usr/bin/time -f "%e s, peak %M KiB" -o "$W/itime" $B index -q --sort-memory "$sort_gb" "$W/synth.fa"
    log "bcuda index ($(nproc) cores, --sort-memory $sort_gb): $(cat "$W/itime")"
    wait $sim
    log "1M reads simulated"
    $DEV gpu-bench "$W/synth.fa" "$W/reads.fq" 2>&1 | log_stdin
    head -400000 "$W/reads.fq" > "$W/r100k.fq"
    $B aln --cpu --quiet -t 16 "$W/synth.fa" "$W/r100k.fq" > "$W/cpu.sai"
    $B aln --gpu --quiet -t 16 "$W/synth.fa" "$W/r100k.fq" > "$W/gpu.sai"
    cmp -s "$W/cpu.sai" "$W/gpu.sai" && log "100k reads: GPU .sai = CPU .sai" || log "100k reads: GPU .sai DIFFERS from CPU"
    # bcuda twice (run to run spread), then bwa.
    t0=$(now)
    $B aln --gpu -t 16 "$W/synth.fa" "$W/reads.fq" > "$W/gpu_all.sai" 2> "$W/summary"
    s1=$(secs "$t0" "$(now)")
    log_stdin < "$W/summary"
    t0=$(now)
    $B aln --gpu -t 16 "$W/synth.fa" "$W/reads.fq" > "$W/gpu_all2.sai" 2> "$W/summary2"
    s2=$(secs "$t0" "$(now)")
    log_stdin < "$W/summary2"
    t0=$(now)
    "$BWA" aln -t 16 "$W/synth.fa" "$W/reads.fq" > "$W/bwa_all.sai" 2> /dev/null
    log "whole aln, 1M reads: bcuda --gpu $s1 s and $s2 s, bwa aln -t 16 $(secs "$t0" "$(now)") s"
    same_records "$W/gpu_all.sai" "$W/bwa_all.sai" && log "1M reads: bcuda --gpu .sai records = bwa's" \
        || log "1M reads: bcuda .sai records differ from bwa's"
    cmp -s "$W/gpu_all.sai" "$W/gpu_all2.sai" || log "the two bcuda runs' .sai differ"
}
