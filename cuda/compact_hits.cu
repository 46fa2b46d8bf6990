// The batch's hits packed for the copy back to the host (src/gpu/compact_hits.rs reads them).
//
// The passes write each read's hits into a slot of its own (hits_per_read x 3 words) as they
// find them. Most reads have one or two, so copying the slots would copy, and page-lock on the
// host, mostly empty words: 100 MB a batch of 262,144 reads against about 10 MB of hits.
//
// One thread a chunk of `chunk_reads` reads: it claims room for its reads' hits with one atomic
// on `chunk_at[0]` (the batch's hits so far), writes where its chunk starts in `chunk_at[1 +
// chunk]`, and copies its reads' hits there in read order. Chunks land in any order; the host
// finds each read's hits from its chunk's start and the counts of the reads before it in the
// chunk. A read whose count is negative (given up) or over hits_per_read (its hits are in the
// long list) has none here.

__device__ __forceinline__ u32 kept_hits(int count, int hits_per_read)
{
    return count >= 0 && count <= hits_per_read ? (u32)count : 0u;
}

extern "C" __global__ void __launch_bounds__(256) compact_hits(const int *__restrict__ n_hits,
    const u64 *__restrict__ hits, int hits_per_read, u32 n, u32 chunk_reads, u32 *__restrict__ chunk_at,
    u64 *__restrict__ compact)
{
    u64 chunk = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 first = chunk * chunk_reads;
    if (first >= n) return;
    u64 end = first + chunk_reads < n ? first + chunk_reads : n;
    u32 count = 0;
    for (u64 i = first; i < end; ++i) count += kept_hits(n_hits[i], hits_per_read);
    u32 at = atomicAdd(&chunk_at[0], count);
    chunk_at[1 + chunk] = at;
    u64 *out = compact + (u64)at * 3;
    for (u64 i = first; i < end; ++i) {
        const u64 *slot = hits + i * hits_per_read * 3;
        u32 words = 3 * kept_hits(n_hits[i], hits_per_read);
        for (u32 w = 0; w < words; ++w) out[w] = slot[w];
        out += words;
    }
}
