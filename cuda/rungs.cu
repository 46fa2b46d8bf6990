// The speculative ladder's rungs inside a batch (BCUDA_TEST_LADDER; src/gpu/rungs.rs): the
// passes run with each read's limit at a guess (1 for the reads exact_match found whole, then
// the ladder's guesses), then bwa's own limit for the reads no rung answered. A rung's search
// is bwa's with that limit; its answer stands where its first hit has fewer differences than
// the guess and scores under s_mm (guess + 1): bwa's first hit is then the rung's, and bwa's
// search after it is bounded as the rung's is. bwa's -m is not guarded here (the -m guard,
// cuda/m_guard.cuh, is not in these kernels yet), so where -m stops bwa's search the answer may
// differ: a measurement of the rungs' time, not an aligner's mode. NVRTC compiles it after
// bwt.cuh (its types and occurs_whole).

// Each inexact read's limit for the first rung: 1 for the reads that occur whole (by
// exact_match's intervals, or with `root` by the root chains' whole-read interval, as
// inexact_order tells them), else `guess`; never more than its own.
extern "C" __global__ void rung_first(const u64 *__restrict__ exact_k, const u64 *__restrict__ exact_l,
    const u64 *__restrict__ root, const u64 *__restrict__ code_start, const u16 *__restrict__ read_len,
    const u32 *__restrict__ read_of, u32 n, int guess, int *__restrict__ rung_diff)
{
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    u64 k, l;
    if (root) {
        u64 cell = code_start[j] + j + read_len[j];
        k = root[2 * cell];
        l = root[2 * cell + 1];
    } else {
        k = exact_k[read_of[j]];
        l = exact_l[read_of[j]];
    }
    int g = occurs_whole(k, l) ? 1 : guess;
    if (g < rung_diff[j]) rung_diff[j] = g;
}

// The rung's reads (pass 1's queue, which the passes only read) kept for its verdict.
extern "C" __global__ void rung_keep(const u32 *__restrict__ queue, const u32 *__restrict__ queue_counters,
    u32 *__restrict__ rung, u32 *__restrict__ rung_count)
{
    u32 n = queue_counters[0];
    for (u32 p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x) rung[p] = queue[p];
    if (blockIdx.x == 0 && threadIdx.x == 0) *rung_count = n;
}

// The rung's verdict on each of its reads: the answer stands where the rung's limit was the
// read's own, where the passes left the read to the CPU (a negative count: the CPU searches it
// with its own limit), or where the first hit is under the guess in differences and in score.
// The others go to pass 1's queue (its counters zeroed before) with the next limit: `next`, or
// their own where `next` is 0 (the last rung) or no less.
extern "C" __global__ void rung_verdict(const u32 *__restrict__ rung, const u32 *__restrict__ rung_count,
    const int *__restrict__ full, int *__restrict__ rung_diff, int next, int s_mm, int gape_counts,
    const int *__restrict__ n_hits, const u64 *__restrict__ hits, int hits_per_read, const u64 *__restrict__ long_hits,
    const u32 *__restrict__ long_offsets, u32 *__restrict__ queue, u32 *__restrict__ queue_counters)
{
    u32 n = *rung_count;
    for (u32 p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x) {
        u32 id = rung[p];
        int g = rung_diff[id], count = n_hits[id];
        if (full[id] <= g || count < 0) continue;
        if (count > 0) {
            // A hit is three words (bwt_aln1_t's bit fields, k, l): n_mm, n_gapo and n_gape a
            // byte each from the low end, then the score's 20 bits.
            u64 bits = count <= hits_per_read ? hits[(u64)id * hits_per_read * 3] : long_hits[(u64)long_offsets[id] * 3];
            int d = (int)(bits & 0xff) + (int)(bits >> 8 & 0xff) + (gape_counts ? (int)(bits >> 16 & 0xff) : 0);
            int score = (int)(bits >> 24 & 0xfffff);
            if (d < g && score < s_mm * (g + 1)) continue;
        }
        rung_diff[id] = next > 0 && next < full[id] ? next : full[id];
        queue[atomicAdd(&queue_counters[0], 1u)] = id;
    }
}

// The passes' queue counters zeroed before a verdict fills pass 1's queue again.
extern "C" __global__ void rung_reset(u32 *__restrict__ counters, u32 n)
{
    for (u32 i = threadIdx.x; i < n; i += blockDim.x) counters[i] = 0;
}
