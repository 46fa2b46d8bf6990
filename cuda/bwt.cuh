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

// Whether exact_match's interval [k, l] for a read says it occurs whole: not empty, and not
// (0, 0), which marks a read with an N.
__device__ __forceinline__ bool occurs_whole(u64 k, u64 l) { return k <= l && !(k == 0 && l == 0); }

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

// ---- Occurrence sectors: the same counts in 32 bytes per 64 BWT positions (one memory
// sector instead of bwa's 64-byte line per 128), laid out so that a count needs no shifts
// over 2-bit fields. Sector s holds positions 64s..64s+63 ($ excluded, as in bwa's array):
//   4 x u32  counts of A, C, G, T before the sector, less its superblock's base;
//   u64      the high bits of its bases (G or T), bit j for position 64s + j;
//   u64      the low bits (C or T).
// The array starts with SECTOR_SUPERS superblocks' bases (4 x u64 each): the counts before
// position j << SECTOR_SUPER_SHIFT, so that a sector's own counts fit 32 bits. Built from
// bwa's array by cuda/occ_sectors.cu.
#ifndef SECTOR_SUPER_SHIFT
#define SECTOR_SUPER_SHIFT 32
#endif
#ifndef SECTOR_SUPERS
#define SECTOR_SUPERS 4
#endif
#define SECTOR_ROWS 64

// How the search reads a sector's halves (-D occ_l1, from the switches): its lookups land on
// random sectors, rarely read twice, which may give L1 up to what is (the team passes' push
// buffers, read back by the commit). 0: plain loads; 1 and 3: marked first to evict from L1; 2:
// not kept in L1 at all.
#ifndef occ_l1
#define occ_l1 0
#endif
#if occ_l1 == 1 || occ_l1 == 3
#define SECTOR_LOAD "ld.global.nc.L1::evict_first.v4.u32"
#elif occ_l1 == 2
#define SECTOR_LOAD "ld.global.nc.L1::no_allocate.v4.u32"
#endif
__device__ __forceinline__ uint4 sector_half(const uint4 *sector, int h)
{
#ifdef SECTOR_LOAD
    uint4 v;
    asm(SECTOR_LOAD " {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(sector + h));
    return v;
#else
    return sector[h];
#endif
}

// Sector s of the array at `sectors` (as 16-byte halves: counts, then the two planes).
__device__ __forceinline__ const uint4 *sector_at(const u32 *sectors, u64 s)
{
    return (const uint4 *)sectors + 2 * SECTOR_SUPERS + 2 * s;
}

// The bases of a sector up to position x (its first (x & 63) + 1), as the two planes.
__device__ __forceinline__ void sector_planes(const uint4 *sector, u64 x, u64 &hi, u64 &lo)
{
    uint4 p = sector_half(sector, 1);
    u64 keep = ~0ULL >> (63 - (u32)(x & 63));
    hi = ((u64)p.y << 32 | p.x) & keep;
    lo = ((u64)p.w << 32 | p.z) & keep;
}

// Occurrences of every base at positions 0..=x.
__device__ __forceinline__ void sector_count4(const u32 *sectors, u64 x, u64 cnt[4])
{
    const u64 *super = (const u64 *)sectors + 4 * (x >> SECTOR_SUPER_SHIFT);
    const uint4 *sector = sector_at(sectors, x / SECTOR_ROWS);
    uint4 before = sector_half(sector, 0);
    u64 hi, lo;
    sector_planes(sector, x, hi, lo);
    u32 high = __popcll(hi), low = __popcll(lo), both = __popcll(hi & lo);
    u32 n = (u32)(x & 63) + 1;
    cnt[0] = super[0] + before.x + (n - high - low + both);
    cnt[1] = super[1] + before.y + (low - both);
    cnt[2] = super[2] + before.z + (high - both);
    cnt[3] = super[3] + before.w + both;
}

// Occurrences of every base in BWT rows 0..=k ($ excluded; k == ~0 gives zeros), as occ4 counts
// them from bwa's array.
__device__ __forceinline__ void sector_occ4(const u32 *sectors, u64 primary, u64 k, u64 cnt[4])
{
    if (k == ~0ULL) {
        cnt[0] = cnt[1] = cnt[2] = cnt[3] = 0;
        return;
    }
    sector_count4(sectors, k - (k >= primary ? 1 : 0), cnt);
}

// Occurrences of base c at positions 0..=x.
__device__ __forceinline__ u64 sector_count(const u32 *sectors, u64 x, int c)
{
    const u64 *super = (const u64 *)sectors + 4 * (x >> SECTOR_SUPER_SHIFT);
    const uint4 *sector = sector_at(sectors, x / SECTOR_ROWS);
    uint4 before = sector_half(sector, 0);
    u64 hi, lo;
    sector_planes(sector, x, hi, lo);
    u64 keep = ~0ULL >> (63 - (u32)(x & 63));
    u64 of_c = (c & 2 ? hi : ~hi) & (c & 1 ? lo : ~lo) & keep;
    u32 own = c == 0 ? before.x : c == 1 ? before.y : c == 2 ? before.z : before.w;
    return super[c] + own + __popcll(of_c);
}

// The base at position x.
__device__ __forceinline__ int sector_base(const u32 *sectors, u64 x)
{
    uint4 p = sector_half(sector_at(sectors, x / SECTOR_ROWS), 1);
    u32 j = (u32)(x & 63);
    u64 hi = (u64)p.y << 32 | p.x, lo = (u64)p.w << 32 | p.z;
    return (int)((hi >> j & 1) << 1 | (lo >> j & 1));
}
