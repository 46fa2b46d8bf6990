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

// Counts of every base from a superblock's bases, the counts before a sector and its planes
// (up to the position counted, n of them).
__device__ __forceinline__ void planes_count4(const u64 *super, uint4 before, u64 hi, u64 lo, u32 n, u64 cnt[4])
{
    u32 high = __popcll(hi), low = __popcll(lo), both = __popcll(hi & lo);
    cnt[0] = super[0] + before.x + (n - high - low + both);
    cnt[1] = super[1] + before.y + (low - both);
    cnt[2] = super[2] + before.z + (high - both);
    cnt[3] = super[3] + before.w + both;
}

// Occurrences of every base at positions 0..=x.
__device__ __forceinline__ void sector_count4(const u32 *sectors, u64 x, u64 cnt[4])
{
    const u64 *super = (const u64 *)sectors + 4 * (x >> SECTOR_SUPER_SHIFT);
    const uint4 *sector = sector_at(sectors, x / SECTOR_ROWS);
    uint4 before = sector_half(sector, 0);
    u64 hi, lo;
    sector_planes(sector, x, hi, lo);
    planes_count4(super, before, hi, lo, (u32)(x & 63) + 1, cnt);
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

// ---- Pair sectors (occ_pairs): counts of pairs of bases, so that one lookup gives an
// interval's extensions two bases deep. Position p's pair is (x, y): x its base, y the base of
// the row its LF leads to (row LF(p) = l2[x] + its count of x; none, $, where that is the
// primary row). The rows of x·w are the LFs of w's rows of base x, in their order, so
//   occ(y, l2[x] + occ(x, k)) = PAIR_BEFORE(x, y) + pairs (x, y) in rows 0..=k,
// with PAIR_BEFORE(x, y) = occ(y, l2[x]): the interval of y·x·w from w's rows k - 1 and l.
// They follow the sectors in the same array:
//   32 x u64  PAIR_BEFORE at 4x + y; the position whose pair has no second base; its base;
//   SECTOR_SUPERS x 16 u64  the superblocks' bases of the pairs' counts (at 4x + y);
//   per sector, for each first base x, 32 bytes: the two planes of the sector's second bases
//   (as a sector's; the position without one holds A), then 4 x u32 counts of (x, y) before
//   the sector less its superblock's base. A lookup reads its sector and x's 32 bytes.
// Built by cuda/occ_sectors.cu after the sectors.
#define PAIR_HEADER 32
#define PAIR_DOLLAR 16

// The pairs' header: after the sectors of a BWT of seq_len positions.
__device__ __forceinline__ const u64 *pair_header(const u32 *sectors, u64 seq_len)
{
    return (const u64 *)(sectors + 8 * SECTOR_SUPERS + 8 * ((seq_len + SECTOR_ROWS - 1) / SECTOR_ROWS));
}

// First base x's 32 bytes of sector s (as 16-byte halves: planes, then counts).
__device__ __forceinline__ const uint4 *pair_part(const u64 *head, u64 s, int x)
{
    return (const uint4 *)(head + PAIR_HEADER + 16 * SECTOR_SUPERS) + 2 * (4 * s + x);
}

// Occurrences of every base at positions 0..=p, and of the pairs (x, y) for every y there.
__device__ __forceinline__ void sector_pair_count4(const u32 *sectors, u64 seq_len, u64 p, int x, u64 cnt[4], u64 pairs[4])
{
    const u64 *head = pair_header(sectors, seq_len);
    const uint4 *sector = sector_at(sectors, p / SECTOR_ROWS), *part = pair_part(head, p / SECTOR_ROWS, x);
    uint4 before = sector_half(sector, 0), second = sector_half(part, 0), before2 = sector_half(part, 1);
    u64 hi, lo;
    sector_planes(sector, p, hi, lo);
    planes_count4((const u64 *)sectors + 4 * (p >> SECTOR_SUPER_SHIFT), before, hi, lo, (u32)(p & 63) + 1, cnt);
    // The positions of base x up to p, and their second bases' planes there.
    u64 of_x = (x & 2 ? hi : ~hi) & (x & 1 ? lo : ~lo) & (~0ULL >> (63 - (u32)(p & 63)));
    u64 hi2 = ((u64)second.y << 32 | second.x) & of_x, lo2 = ((u64)second.w << 32 | second.z) & of_x;
    planes_count4(head + PAIR_HEADER + 16 * (p >> SECTOR_SUPER_SHIFT) + 4 * x, before2, hi2, lo2, __popcll(of_x), pairs);
    u64 dollar = head[PAIR_DOLLAR];
    if (dollar <= p && dollar / SECTOR_ROWS == p / SECTOR_ROWS && (u64)x == head[PAIR_DOLLAR + 1]) pairs[0] -= 1;
}

// sector_pair_count4 over BWT rows 0..=k ($ excluded; k == ~0 gives zeros), as sector_occ4.
__device__ __forceinline__ void sector_pair_occ4(const u32 *sectors, u64 seq_len, u64 primary, u64 k, int x, u64 cnt[4], u64 pairs[4])
{
    if (k == ~0ULL) {
        for (int c = 0; c < 4; ++c) cnt[c] = pairs[c] = 0;
        return;
    }
    sector_pair_count4(sectors, seq_len, k - (k >= primary ? 1 : 0), x, cnt, pairs);
}

// Pairs (x, y) at positions 0..=p: the sector's bases and x's 32 bytes.
__device__ __forceinline__ u64 sector_pair_count(const u32 *sectors, u64 seq_len, u64 p, int x, int y)
{
    const u64 *head = pair_header(sectors, seq_len);
    const uint4 *part = pair_part(head, p / SECTOR_ROWS, x);
    uint4 second = sector_half(part, 0), before2 = sector_half(part, 1);
    u64 hi, lo;
    sector_planes(sector_at(sectors, p / SECTOR_ROWS), p, hi, lo);
    u64 hi2 = (u64)second.y << 32 | second.x, lo2 = (u64)second.w << 32 | second.z;
    u64 of_xy = (x & 2 ? hi : ~hi) & (x & 1 ? lo : ~lo) & (y & 2 ? hi2 : ~hi2) & (y & 1 ? lo2 : ~lo2);
    u32 own = y == 0 ? before2.x : y == 1 ? before2.y : y == 2 ? before2.z : before2.w;
    u64 n = head[PAIR_HEADER + 16 * (p >> SECTOR_SUPER_SHIFT) + 4 * x + y] + own + __popcll(of_xy & (~0ULL >> (63 - (u32)(p & 63))));
    u64 dollar = head[PAIR_DOLLAR];
    if (y == 0 && dollar <= p && dollar / SECTOR_ROWS == p / SECTOR_ROWS && (u64)x == head[PAIR_DOLLAR + 1]) n -= 1;
    return n;
}

// sector_pair_count over BWT rows 0..=k ($ excluded; k == ~0 gives 0).
__device__ __forceinline__ u64 sector_pair_occ(const u32 *sectors, u64 seq_len, u64 primary, u64 k, int x, int y)
{
    return k == ~0ULL ? 0 : sector_pair_count(sectors, seq_len, k - (k >= primary ? 1 : 0), x, y);
}
