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

// Occurrences of c in BWT rows 0..=r ($ excluded), from the sectors.
__device__ __forceinline__ u64 rows_count(const u32 *sectors, u64 primary, u64 r, int c)
{
    return sector_count(sectors, r - (r >= primary ? 1 : 0), c);
}

// Pairs (x, y) at the positions before p: the rows of x·w for the positions of x before p are
// rows l2[x] + 1 .. l2[x] + (their count), whose bases are the pairs' second ones.
__device__ __forceinline__ u64 pairs_before(const u32 *sectors, u64 primary, const u64 *l2, u64 p, int x, int y)
{
    u64 of_x = p ? sector_count(sectors, p - 1, x) : 0;
    return rows_count(sectors, primary, l2[x] + of_x, y) - rows_count(sectors, primary, l2[x], y);
}

// The pair sectors (bwt.cuh) from the occurrence sectors built before them: one thread per
// sector; the first 16 x SECTOR_SUPERS threads also write the header's counts.
extern "C" __global__ void __launch_bounds__(256) build_pair_sectors(u32 *sectors, u64 seq_len, u64 primary, const u64 *__restrict__ l2)
{
    u64 s = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 *head = (u64 *)pair_header(sectors, seq_len);
    if (s < 16) head[s] = rows_count(sectors, primary, l2[s / 4], (int)(s % 4));
    if (s < 16 * SECTOR_SUPERS) {
        u64 start = (s / 16) << SECTOR_SUPER_SHIFT;
        head[PAIR_HEADER + s] = start < seq_len ? pairs_before(sectors, primary, l2, start, (int)(s % 16 / 4), (int)(s % 4)) : 0;
    }
    u64 first = s * SECTOR_ROWS;
    if (first >= seq_len) return;
    // The row each base's LF reached just before the sector; each position of base x then
    // takes the next row of x·w.
    u64 lf[4];
    for (int x = 0; x < 4; ++x) lf[x] = l2[x] + (first ? sector_count(sectors, first - 1, x) : 0);
    u64 hi = 0, lo = 0;
    for (u32 j = 0; j < SECTOR_ROWS && first + j < seq_len; ++j) {
        int x = sector_base(sectors, first + j);
        u64 row = ++lf[x];
        int y = 0;
        if (row == primary) {
            head[PAIR_DOLLAR] = first + j;
            head[PAIR_DOLLAR + 1] = (u64)x;
        } else {
            y = sector_base(sectors, row - (row > primary ? 1 : 0));
        }
        hi |= (u64)(y >> 1) << j;
        lo |= (u64)(y & 1) << j;
    }
    u64 super_start = (first >> SECTOR_SUPER_SHIFT) << SECTOR_SUPER_SHIFT;
    for (int x = 0; x < 4; ++x) {
        u32 *out = (u32 *)pair_part(head, s, x);
        out[0] = (u32)hi;
        out[1] = (u32)(hi >> 32);
        out[2] = (u32)lo;
        out[3] = (u32)(lo >> 32);
        for (int y = 0; y < 4; ++y)
            out[4 + y] = (u32)(pairs_before(sectors, primary, l2, first, x, y) - pairs_before(sectors, primary, l2, super_start, x, y));
    }
}
