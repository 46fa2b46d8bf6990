// exact_match: one read per thread (two with kl_par), backward search of the read's reverse
// complement over the FM-index, as bwa's bwt_match_exact. Output per read: the SA interval
// [k, l]; k > l when the interval empties, k = l = 0 when the search reaches an N first.
//
// Reads are 4-bit codes (0..3 = ACGT, 4 = N), 8 per u32, first base in the low bits.
// Tuning switches (-D, BarraCUDA's names and defaults are set by the host):
//   BLOCK_W threads per block; cache_threads lanes that load BWT blocks together; kl_par
//   k and l by a pair of threads; occ_par occ counting split over the cache_threads lanes;
//   many_blocks 2-D grid; direct_sequence read bases from global memory during the search;
//   direct_index all reads one length (no offset array); sequence_global plain loads for
//   reads (else __ldg); sequence_shift81 unpack bases with shifts; sequence_stride reads
//   interleaved in groups of 32; mycache4 / mycache2 load BWT blocks in 16 / 8-byte units;
//   direct_global_bwt plain loads of the BWT (else __ldg); cache_global_bwt keep the last
//   BWT block in a software cache; scache_global_bwt keep that cache in scalars.

#define MAX_READ_WORDS 64

__device__ __forceinline__ u32 load_read_word(const u32 *reads, u64 index)
{
#if sequence_global
    return reads[index];
#else
    return __ldg(reads + index);
#endif
}

// Index of word `w` of read `r` whose words start at `start`.
__device__ __forceinline__ u64 read_word_index(u32 r, u64 start, u32 w)
{
#if sequence_stride
    return start + (u64)w * 32 + (r & 31);
#else
    return start + w;
#endif
}

__device__ __forceinline__ u32 base_of(u32 word, u32 j)
{
#if sequence_shift81
    return (word >> ((j & 7) << 2)) & 15;
#else
    return ((const u8 *)&word)[(j % 8) / 2] >> (4 * (j % 2)) & 15;
#endif
}

__device__ __forceinline__ u32 load_bwt_word(const u32 *words, u64 i)
{
#if direct_global_bwt
    return words[i];
#else
    return __ldg(words + i);
#endif
}

// The last BWT block a thread read: 16 words in an array, or in 16 scalars (registers).
struct BlockCache {
#if scache_global_bwt
    u32 w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15;
#else
    u32 w[16];
#endif
    u64 block;
};

__device__ __forceinline__ u32 cache_word(const BlockCache &cache, int i)
{
#if scache_global_bwt
    switch (i) {
    case 0: return cache.w0;
    case 1: return cache.w1;
    case 2: return cache.w2;
    case 3: return cache.w3;
    case 4: return cache.w4;
    case 5: return cache.w5;
    case 6: return cache.w6;
    case 7: return cache.w7;
    case 8: return cache.w8;
    case 9: return cache.w9;
    case 10: return cache.w10;
    case 11: return cache.w11;
    case 12: return cache.w12;
    case 13: return cache.w13;
    case 14: return cache.w14;
    default: return cache.w15;
    }
#else
    return cache.w[i];
#endif
}

__device__ __forceinline__ void set_cache_word(BlockCache &cache, int i, u32 v)
{
#if scache_global_bwt
    switch (i) {
    case 0: cache.w0 = v; break;
    case 1: cache.w1 = v; break;
    case 2: cache.w2 = v; break;
    case 3: cache.w3 = v; break;
    case 4: cache.w4 = v; break;
    case 5: cache.w5 = v; break;
    case 6: cache.w6 = v; break;
    case 7: cache.w7 = v; break;
    case 8: cache.w8 = v; break;
    case 9: cache.w9 = v; break;
    case 10: cache.w10 = v; break;
    case 11: cache.w11 = v; break;
    case 12: cache.w12 = v; break;
    case 13: cache.w13 = v; break;
    case 14: cache.w14 = v; break;
    default: cache.w15 = v; break;
    }
#else
    cache.w[i] = v;
#endif
}

// Loads the 16 words of one occurrence block in the unit the switches ask for.
__device__ __forceinline__ void load_block(const u32 *words, u64 block, BlockCache &cache)
{
    const u32 *blk = words + block * OCC_BLOCK_WORDS;
#if mycache4
    for (int q = 0; q < 4; ++q) {
        uint4 v = __ldg((const uint4 *)blk + q);
        set_cache_word(cache, 4 * q, v.x);
        set_cache_word(cache, 4 * q + 1, v.y);
        set_cache_word(cache, 4 * q + 2, v.z);
        set_cache_word(cache, 4 * q + 3, v.w);
    }
#elif mycache2
    for (int q = 0; q < 8; ++q) {
        uint2 v = __ldg((const uint2 *)blk + q);
        set_cache_word(cache, 2 * q, v.x);
        set_cache_word(cache, 2 * q + 1, v.y);
    }
#else
    for (int q = 0; q < 16; ++q) set_cache_word(cache, q, load_bwt_word(words, block * OCC_BLOCK_WORDS + q));
#endif
    cache.block = block;
}

// Occurrences of `c` in the cached block before position n (1..128), plus the block's count.
__device__ __forceinline__ u64 occ_from_cache(const BlockCache &cache, u32 n, int c)
{
    u64 pattern = LOW_BITS * (u64)c;
    u64 total = (u64)cache_word(cache, 2 * c) | ((u64)cache_word(cache, 2 * c + 1) << 32);
    for (int j = 0; j < 4; ++j) {
        if (32 * (u32)j >= n) break;
        u64 y = (((u64)cache_word(cache, 8 + 2 * j) << 32) | cache_word(cache, 9 + 2 * j)) ^ pattern;
        u64 hits = ~(y | (y >> 1)) & LOW_BITS;
        u32 left = n - 32 * j;
        if (left < 32) hits &= ~0ULL << (64 - 2 * left);
        total += __popcll(hits);
    }
    return total;
}

// occ(k, c), reusing the cached block when the query falls in it.
__device__ __forceinline__ u64 cached_occ(const u32 *words, u64 primary, u64 k, int c, BlockCache &cache)
{
    if (k == ~0ULL) return 0;
    u64 x = k - (k >= primary ? 1 : 0);
    u64 block = x >> 7;
#if cache_global_bwt
    if (block != cache.block) load_block(words, block, cache);
#else
    load_block(words, block, cache);
#endif
    return occ_from_cache(cache, (u32)(x & 127) + 1, c);
}

#ifdef cache_threads
// Cooperative path: groups of cache_threads lanes search their reads in step. For every
// occurrence query the group loads each member's BWT block into shared memory together
// (16 words shared over the lanes), and with occ_par the group also splits the counting.

// Mask of the lanes of this thread's group within the warp.
__device__ __forceinline__ unsigned group_mask()
{
    unsigned lane = threadIdx.x & 31;
    unsigned bits = cache_threads == 32 ? 0xffffffffu : ((1u << cache_threads) - 1);
    return bits << (lane & ~(cache_threads - 1));
}

// occ(k, c) for every member of the group at once; `slot` is this thread's shared block.
__device__ __forceinline__ u64 group_occ(const u32 *words, u64 primary, u64 k, int c, bool active, u32 (*slots)[16])
{
    unsigned mask = group_mask();
    u32 member = threadIdx.x & (cache_threads - 1);
    u32 first = threadIdx.x - member;
    u64 x = k - (k >= primary ? 1 : 0);
    u64 block = (active && k != ~0ULL) ? (x >> 7) : ~0ULL;
    for (u32 m = 0; m < cache_threads; ++m) {
        u64 b = __shfl_sync(mask, block, m, cache_threads);
        if (b == ~0ULL) continue;
        for (u32 w = member; w < 16; w += cache_threads) slots[first + m][w] = load_bwt_word(words, b * OCC_BLOCK_WORDS + w);
    }
    __syncwarp(mask);
    u32 n = (u32)(x & 127) + 1;
    const u32 *blk = slots[threadIdx.x];
#if occ_par
    // Lane `member` counts chunk(s) member, member + cache_threads, ... of every member's block.
    u64 mine = 0;
    for (u32 m = 0; m < cache_threads; ++m) {
        u32 nm = __shfl_sync(mask, n, m, cache_threads);
        int cm = __shfl_sync(mask, c, m, cache_threads);
        u64 bm = __shfl_sync(mask, block, m, cache_threads);
        u64 part = 0;
        if (bm != ~0ULL) {
            const u32 *bb = slots[first + m];
            u64 pattern = LOW_BITS * (u64)cm;
            for (u32 j = member; j < 4; j += cache_threads) {
                if (32 * j >= nm) continue;
                u64 y = ((((u64)bb[8 + 2 * j]) << 32) | bb[9 + 2 * j]) ^ pattern;
                u64 hits = ~(y | (y >> 1)) & LOW_BITS;
                u32 left = nm - 32 * j;
                if (left < 32) hits &= ~0ULL << (64 - 2 * left);
                part += __popcll(hits);
            }
        }
        for (u32 offset = cache_threads / 2; offset > 0; offset /= 2) part += __shfl_xor_sync(mask, part, offset, cache_threads);
        if (m == member) mine = part;
    }
    u64 counted = mine;
#else
    u64 counted = count_in_block(blk, n, c);
#endif
    u64 result = ((u64)blk[2 * c] | ((u64)blk[2 * c + 1] << 32)) + counted;
    __syncwarp(mask);
    if (!active) return 0;
    if (k == ~0ULL) return 0;
    return result;
}

// The whole search of one read by the cooperative path; every lane of the group runs the
// same number of steps (the group's longest read), finished lanes only help with loads.
__device__ void group_search(const u32 *words, u64 primary, u64 seq_len, const u64 *l2, const u32 *reads, u32 rr, u64 start,
                             u32 len, bool live, u64 &k, u64 &l, bool &has_n, u32 (*slots)[16])
{
    unsigned mask = group_mask();
    u32 steps = len;
    for (u32 offset = cache_threads / 2; offset > 0; offset /= 2) steps = max(steps, __shfl_xor_sync(mask, steps, offset, cache_threads));
    bool active = live;
    k = 0;
    l = seq_len;
    for (u32 j = 0; j < steps; ++j) {
        int c = 0;
        if (active && j < len) {
            u32 b = base_of(load_read_word(reads, read_word_index(rr, start, j >> 3)), j);
            if (b > 3) {
                has_n = true;
                active = false;
            } else c = 3 - (int)b;
        } else active = false;
        u64 ok = group_occ(words, primary, k - 1, c, active, slots);
        u64 ol = group_occ(words, primary, l, c, active, slots);
        if (active) {
            k = l2[c] + ok + 1;
            l = l2[c] + ol;
            if (k > l) active = false;
        }
    }
}
#endif

extern "C" __global__ void __launch_bounds__(BLOCK_W) exact_match(
    const u32 *__restrict__ words, u64 primary, u64 seq_len, const u64 *__restrict__ l2,
    const u32 *__restrict__ reads, u64 n_read_words, const u64 *__restrict__ read_start,
    const u16 *__restrict__ read_len, u32 n_reads, u32 fixed_len, u64 *__restrict__ out_k, u64 *__restrict__ out_l)
{
#if many_blocks
    u64 thread = ((u64)blockIdx.y * gridDim.x + blockIdx.x) * BLOCK_W + threadIdx.x;
#else
    u64 thread = (u64)blockIdx.x * BLOCK_W + threadIdx.x;
#endif
#if kl_par
    u32 r = (u32)(thread >> 1);
    u32 side = (u32)(thread & 1);
#else
    u32 r = (u32)thread;
#endif
    bool live = r < n_reads;
    u32 rr = live ? r : 0;
#if direct_index
    u32 len = fixed_len;
#if sequence_stride
    u64 start = (u64)(rr >> 5) * 32 * ((fixed_len + 7) / 8);
#else
    u64 start = (u64)rr * ((fixed_len + 7) / 8);
#endif
#else
    u32 len = read_len[rr];
    u64 start = read_start[rr];
#endif
#if !direct_sequence
    u32 local[MAX_READ_WORDS];
    for (u32 w = 0; w < (len + 7) / 8 && w < MAX_READ_WORDS; ++w) local[w] = load_read_word(reads, read_word_index(rr, start, w));
#endif
    u64 k = 0, l = seq_len;
    bool has_n = false;
#ifdef cache_threads
    __shared__ u32 slots[BLOCK_W][16];
    group_search(words, primary, seq_len, l2, reads, rr, start, len, live, k, l, has_n, slots);
#else
    BlockCache cache;
    cache.block = ~0ULL;
    for (u32 j = 0; j < len; ++j) {
#if direct_sequence
        u32 word = load_read_word(reads, read_word_index(rr, start, j >> 3));
#else
        u32 word = local[j >> 3];
#endif
        u32 b = base_of(word, j);
        if (b > 3) {
            has_n = true;
            break;
        }
        int c = 3 - (int)b;
#if kl_par
        // Each thread of the pair queries one end; the results are swapped over the pair.
        u64 mine = cached_occ(words, primary, side ? l : k - 1, c, cache);
        u64 other = __shfl_xor_sync(__activemask(), mine, 1);
        u64 ok = side ? other : mine;
        u64 ol = side ? mine : other;
#else
        u64 ok = cached_occ(words, primary, k - 1, c, cache);
        u64 ol = cached_occ(words, primary, l, c, cache);
#endif
        k = l2[c] + ok + 1;
        l = l2[c] + ol;
        if (k > l) break;
    }
#endif
    if (!live) return;
#if kl_par
    if (side) return;
#endif
    out_k[r] = has_n ? 0 : k;
    out_l[r] = has_n ? 0 : l;
}
