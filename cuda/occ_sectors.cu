// Occurrence sectors (bwt.cuh) from bwa's .bwt array on the GPU: one thread per sector; the
// first SECTOR_SUPERS x 4 threads also write the superblocks' bases.

// Occurrences of c at positions before x (x < the sequence's length, or its multiple of 128).
__device__ __forceinline__ u64 count_before(const u32 *words, u64 x, int c)
{
    const u32 *blk = words + (x >> 7) * OCC_BLOCK_WORDS;
    return ((u64)blk[2 * c] | ((u64)blk[2 * c + 1] << 32)) + count_in_block(blk, (u32)(x & 127), c);
}

extern "C" __global__ void __launch_bounds__(256) build_occ_sectors(
    const u32 *__restrict__ words, u64 seq_len, u32 *__restrict__ sectors)
{
    u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 *super = (u64 *)sectors;
    if (s < 4 * SECTOR_SUPERS) {
        u64 start = (s / 4) << SECTOR_SUPER_SHIFT;
        super[s] = start < seq_len ? count_before(words, start, (int)(s % 4)) : 0;
    }
    u64 first = s * SECTOR_ROWS;
    if (first >= seq_len) return;
    u64 base_start = (first >> SECTOR_SUPER_SHIFT) << SECTOR_SUPER_SHIFT;
    u32 *out = (u32 *)((uint4 *)sectors + 2 * SECTOR_SUPERS + 2 * s);
    for (int c = 0; c < 4; ++c) out[c] = (u32)(count_before(words, first, c) - count_before(words, base_start, c));
    // The sector's 64 bases: four of bwa's words of 16 (first base in the high bits).
    const u32 *bases = words + (first >> 7) * OCC_BLOCK_WORDS + 8 + (first & 127) / 16;
    u64 hi = 0, lo = 0;
    for (u32 j = 0; j < SECTOR_ROWS; ++j) {
        u32 b = bases[j / 16] >> (30 - 2 * (j % 16)) & 3;
        hi |= (u64)(b >> 1) << j;
        lo |= (u64)(b & 1) << j;
    }
    out[4] = (u32)hi;
    out[5] = (u32)(hi >> 32);
    out[6] = (u32)lo;
    out[7] = (u32)(lo >> 32);
}
