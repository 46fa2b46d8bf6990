#!/usr/bin/env bash
# Runs on the device machine (see README, "GPU"): GPU .sai vs CPU .sai (the oracle) on every
# read set and option set of the CPU tests, then the exact_match kernel alone and whole
# `aln` against `bwa aln -t 16`. Needs .carry/ made by scripts/gpu-bundle.sh.
# Writes everything to $OUT (or ./gpu-out). SKIP_SWITCHES=1 skips the per-switch sweep.
. "$(dirname "$0")/device-env.sh"
log() { echo "$@" | tee -a "$OUT/gpu-check.log"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt"
nproc >> "$OUT/device.txt"
for g in lambda ecoli536; do gzip -dc $C/data/$g.fa.gz > $W/$g.fa; $B index -q $W/$g.fa; done
cp testdata/demo_ref.fa $W/ && $B index -q $W/demo_ref.fa
failures=0
check() {
    local prefix=$1 reads=$2
    shift 2
    $B aln --cpu --quiet -t 16 "$@" $W/$prefix "$reads" > $W/cpu.sai
    if ! $B aln --gpu --quiet -t 16 "$@" $W/$prefix "$reads" > $W/gpu.sai 2> $W/gpu.err; then
        log "FAIL  $prefix $(basename "$reads") [$*]: $(tail -2 $W/gpu.err)"; failures=$((failures + 1)); return
    fi
    if cmp -s $W/cpu.sai $W/gpu.sai; then
        log "SAME  $prefix $(basename "$reads") [$*]${BCUDA_TEST_STACKS:+ stacks $BCUDA_TEST_STACKS}${BCUDA_TEST_INEXACT_SWITCHES:+ switches $BCUDA_TEST_INEXACT_SWITCHES} $(stat -c %s $W/gpu.sai) bytes"
    else
        log "DIFF  $prefix $(basename "$reads") [$*]${BCUDA_TEST_STACKS:+ stacks $BCUDA_TEST_STACKS}${BCUDA_TEST_INEXACT_SWITCHES:+ switches $BCUDA_TEST_INEXACT_SWITCHES}"; failures=$((failures + 1))
    fi
}
log "== GPU .sai vs CPU .sai"
for opts in "" "-n 2" "-o 0" "-l 25 -k 1" "-R 5"; do check lambda.fa $C/data/lambda_art.fq.gz $opts; done
check ecoli536.fa $C/data/ecoli536_art.fq.gz
check ecoli536.fa $C/data/ecoli536_art.fq.gz -n 2
for L in 36 76 150 250; do check ecoli536.fa $C/data/sim$L.fq.gz; done
check demo_ref.fa testdata/demo.fq
check demo_ref.fa testdata/demo.fq -o 2 -e 2
# Small stacks (BCUDA_TEST_STACKS=pass 1's entries per thread, the warp passes' entries per
# warp) send most reads through the warp passes and some on to the CPU: the .sai must not change.
for stacks in 64,16384 256,8192,32768 16,65536; do
    BCUDA_TEST_STACKS=$stacks check ecoli536.fa $C/data/ecoli536_art.fq.gz
    BCUDA_TEST_STACKS=$stacks check ecoli536.fa $C/data/sim250.fq.gz -n 2
    BCUDA_TEST_STACKS=$stacks $B aln --gpu -t 16 $W/ecoli536.fa $C/data/ecoli536_art.fq.gz 2>&1 >/dev/null | grep "GPU kernels" | sed "s/^/  stacks $stacks: /" | tee -a "$OUT/gpu-check.log"
done
# Pass 1's stacks side by side (stack_interleave), 32-byte entries (compact_entry=0), pass 1's
# list heads in shared memory (heads_shared), pass 1 in lockstep (first_lockstep): the same
# .sai, with small stacks too.
for sw in stack_interleave=1 compact_entry=0 heads_shared=1 "first_lockstep=1 heads_shared=1"; do
    BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa $C/data/ecoli536_art.fq.gz
    BCUDA_TEST_INEXACT_SWITCHES=$sw BCUDA_TEST_STACKS=64,16384 check ecoli536.fa $C/data/sim250.fq.gz -n 2
done
BCUDA_TEST_INEXACT_SWITCHES=compact_entry=0 check lambda.fa $C/data/lambda_art.fq.gz -o 2 -e 3
# The interval table (interval_depth): none, shallow (most mismatch and gap paths cross its
# edge), the default and deep, with ancient DNA's options too (-l 1024 -n 0.01 -o 2).
for sw in interval_depth=0 interval_depth=4 interval_depth=12 interval_depth=14; do
    BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa $C/data/ecoli536_art.fq.gz
    BCUDA_TEST_INEXACT_SWITCHES=$sw BCUDA_TEST_STACKS=64,16384 check ecoli536.fa $C/data/sim250.fq.gz -n 2
    BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa $C/data/sim36.fq.gz -l 1024 -n 0.01 -o 2
    BCUDA_TEST_INEXACT_SWITCHES=$sw check lambda.fa $C/data/lambda_art.fq.gz -o 2 -e 3
done
# Pass 2 hands every read with more than one group of chains on to pass 3
# (level_max_rounds=1; pass 1's small stacks send most reads to pass 2): the same .sai.
BCUDA_TEST_INEXACT_SWITCHES=level_max_rounds=1 BCUDA_TEST_STACKS=16,65536,262144 check ecoli536.fa $C/data/ecoli536_art.fq.gz
BCUDA_TEST_INEXACT_SWITCHES=level_max_rounds=1 BCUDA_TEST_STACKS=16,65536,262144 $B aln --gpu -t 16 $W/ecoli536.fa $C/data/ecoli536_art.fq.gz 2>&1 >/dev/null | grep "GPU kernels" | sed "s/^/  level_max_rounds=1: /" | tee -a "$OUT/gpu-check.log"
# bwa's -m reached inside a group of chains (-m 300): the team passes find where bwa stops
# (entries_limit_exact, the default), or without it the CPU takes those reads; teams of one
# warp in both team passes too, and pass 2's teams of two warps (the default before session 10).
for sw in "" "entries_limit_exact=0" "level_team_lanes=32 last_team_lanes=32" "level_team_lanes=64"; do
    BCUDA_TEST_STACKS=16,65536,262144 BCUDA_TEST_INEXACT_SWITCHES=$sw check ecoli536.fa $C/data/ecoli536_art.fq.gz -m 300
    BCUDA_TEST_STACKS=16,65536,262144 BCUDA_TEST_INEXACT_SWITCHES=$sw $B aln --gpu -t 16 -m 300 $W/ecoli536.fa $C/data/ecoli536_art.fq.gz 2>&1 >/dev/null | grep "reads aligned on the CPU" | sed "s/^/  [$sw]: /" | tee -a "$OUT/gpu-check.log"
done
# Three batches in flight (BCUDA_TEST_SLOTS): the same .sai on every batch, the .sai of 1M
# reads below too.
BCUDA_TEST_SLOTS=3 BCUDA_TEST_BATCH_READS=8192 check ecoli536.fa $C/data/ecoli536_art.fq.gz
log "identity failures: $failures"

log "== start-up: one read, first run (NVRTC compile) and second run (PTX cache)"
head -4 testdata/demo.fq > $W/one.fq
for run in first second; do t0=$(date +%s.%N); $B aln --gpu --quiet $W/ecoli536.fa $W/one.fq > /dev/null; t1=$(date +%s.%N); log "$run: $(python3 -c "print(round($t1 - $t0, 3))") s"; done
log "== exact_match alone (kernel time from GPU events), 1M ART reads = 10 x ecoli536_art"
for i in $(seq 10); do gzip -dc $C/data/ecoli536_art.fq.gz; done > $W/big.fq
$DEV gpu-bench $W/ecoli536.fa $W/big.fq 2>&1 | tee -a "$OUT/gpu-check.log"

[ -n "${SKIP_SWITCHES:-}" ] || {
log "== exact_match with each switch flipped from BarraCUDA's defaults (same reads, intervals checked)"
for sw in "BLOCK_W=128" "BLOCK_W=256" "kl_par=1" "many_blocks=1" "direct_sequence=0" "direct_index=0" "sequence_global=0" \
          "sequence_shift81=0" "sequence_stride=0" "mycache4=0 mycache2=1" "mycache4=0" "direct_global_bwt=1" \
          "cache_global_bwt=0" "scache_global_bwt=1" "cache_threads=1" "cache_threads=4" "cache_threads=8 occ_par=1" \
          "cache_threads=32 occ_par=1"; do
    args=(); for a in $sw; do args+=(--switch "$a"); done
    $DEV gpu-bench --repeats 3 "${args[@]}" $W/ecoli536.fa $W/big.fq 2>&1 | grep -E "switches|reads/s|differing|error" | tr '\n' ' ' | tee -a "$OUT/gpu-check.log"; echo | tee -a "$OUT/gpu-check.log"
done
}

log "== whole aln on the same 1M reads: bcuda --gpu vs bcuda --cpu -t 16 vs bwa aln -t 16"
t0=$(date +%s.%N); $B aln --gpu -t 16 $W/ecoli536.fa $W/big.fq > $W/big_gpu.sai 2> $W/gpu_summary.txt; t1=$(date +%s.%N); tee -a "$OUT/gpu-check.log" < $W/gpu_summary.txt
$B aln --cpu --quiet -t 16 $W/ecoli536.fa $W/big.fq > $W/big_cpu.sai; t2=$(date +%s.%N)
$C/bwa aln -t 16 $W/ecoli536.fa $W/big.fq > $W/big_bwa.sai 2>/dev/null; t3=$(date +%s.%N)
n=$(( $(wc -l < $W/big.fq) / 4 ))
python3 - "$n" "$t0" "$t1" "$t2" "$t3" <<'PY' | tee -a "$OUT/gpu-check.log"
import sys
n, t0, t1, t2, t3 = int(sys.argv[1]), *map(float, sys.argv[2:])
rows = [("bcuda aln --gpu", t1 - t0), ("bcuda aln --cpu -t 16", t2 - t1), ("bwa aln -t 16", t3 - t2)]
print(f"| run | reads | seconds | reads/s | vs bwa -t 16 |\n|---|---|---|---|---|")
for name, s in rows:
    print(f"| {name} | {n} | {s:.2f} | {n / s:,.0f} | {(t3 - t2) / s:.2f}x |")
PY
cmp -s $W/big_gpu.sai $W/big_cpu.sai && log "1M-read .sai: GPU = CPU" || { log "1M-read .sai: GPU != CPU"; failures=$((failures + 1)); }
# A GPU batch that fails (here the second, on purpose) is aligned on the CPU: same .sai.
BCUDA_TEST_FAIL_BATCH=2 $B aln --gpu -t 16 $W/ecoli536.fa $W/big.fq > $W/big_fail.sai 2> $W/fail.err
grep -h "failed on purpose" $W/fail.err | tee -a "$OUT/gpu-check.log"
cmp -s $W/big_fail.sai $W/big_cpu.sai && log "1M reads, GPU batch 2 failed: .sai = CPU" || { log "1M reads, GPU batch 2 failed: .sai != CPU"; failures=$((failures + 1)); }
# The same with three batches in flight (BCUDA_TEST_SLOTS=3).
BCUDA_TEST_SLOTS=3 BCUDA_TEST_FAIL_BATCH=2 $B aln --gpu -t 16 $W/ecoli536.fa $W/big.fq > $W/big_fail3.sai 2> /dev/null
cmp -s $W/big_fail3.sai $W/big_cpu.sai && log "1M reads, 3 batches in flight, GPU batch 2 failed: .sai = CPU" || { log "1M reads, 3 in flight, batch 2 failed: .sai != CPU"; failures=$((failures + 1)); }
# A GPU that fails every batch from the second on is given up after 3 in a row; the others
# (here the CPU, on one GPU) take the rest: same .sai. With several GPUs: GPU 1 dies, GPU 0 goes on.
BCUDA_TEST_FAIL_GPU=$([ "$(nvidia-smi -L | wc -l)" -gt 1 ] && echo 1 || echo 0) BCUDA_TEST_FAIL_BATCH=2.. \
    $B aln --gpu -t 16 $W/ecoli536.fa $W/big.fq > $W/big_dead.sai 2> $W/dead.err
grep -h "given up\|^\[bcuda aln\] GPU [0-9]* (" $W/dead.err | tee -a "$OUT/gpu-check.log"
cmp -s $W/big_dead.sai $W/big_cpu.sai && log "1M reads, a GPU dead from batch 2: .sai = CPU" || { log "1M reads, a GPU dead from batch 2: .sai != CPU"; failures=$((failures + 1)); }
cmp -s <(tail -c +69 $W/big_cpu.sai) <(tail -c +69 $W/big_bwa.sai) && log "1M-read .sai records: bcuda = bwa" || log "1M-read .sai records: bcuda != bwa"
exit $failures
