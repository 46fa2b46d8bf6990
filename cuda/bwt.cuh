// The FM-index on the GPU: BWA's interleaved .bwt array, copied as it is in the file.
// Every 128 BWT positions form one 64-byte block: 4 x u64 occurrence counts before the
// block, then 8 words of 16 bases each (first base in the high bits). One occurrence query
// reads one block: one cache line when the array is 64-byte aligned.

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

#define OCC_BLOCK_WORDS 16
#define LOW_BITS 0x5555555555555555ULL

// Counts of `c` in the first `n` (0..128) bases of the block at `blk`.
__device__ __forceinline__ u64 count_in_block(const u32 *blk, u32 n, int c)
{
    u64 pattern = LOW_BITS * (u64)c;
    u64 total = 0;
    for (u32 j = 0; j < 4; ++j) {
        if (32 * j >= n) break;
        u64 chunk = ((u64)blk[8 + 2 * j] << 32) | blk[9 + 2 * j];
        u64 y = chunk ^ pattern;
        u64 hits = ~(y | (y >> 1)) & LOW_BITS;
        u32 left = n - 32 * j;
        if (left < 32) hits &= ~0ULL << (64 - 2 * left);
        total += __popcll(hits);
    }
    return total;
}

// Occurrences of `c` in BWT rows 0..=k ($ excluded); k == ~0 gives 0 (bwa's bwt_occ).
__device__ __forceinline__ u64 occ(const u32 *__restrict__ words, u64 primary, u64 k, int c)
{
    if (k == ~0ULL) return 0;
    u64 x = k - (k >= primary ? 1 : 0);
    const u32 *blk = words + (x >> 7) * OCC_BLOCK_WORDS;
    u64 base = (u64)blk[2 * c] | ((u64)blk[2 * c + 1] << 32);
    return base + count_in_block(blk, (u32)(x & 127) + 1, c);
}

// Occurrences of all four bases in rows 0..=k.
__device__ __forceinline__ void occ4(const u32 *__restrict__ words, u64 primary, u64 k, u64 cnt[4])
{
    if (k == ~0ULL) {
        cnt[0] = cnt[1] = cnt[2] = cnt[3] = 0;
        return;
    }
    u64 x = k - (k >= primary ? 1 : 0);
    const u32 *blk = words + (x >> 7) * OCC_BLOCK_WORDS;
    u32 n = (u32)(x & 127) + 1;
    for (int c = 0; c < 4; ++c) cnt[c] = ((u64)blk[2 * c] | ((u64)blk[2 * c + 1] << 32)) + count_in_block(blk, n, c);
}
